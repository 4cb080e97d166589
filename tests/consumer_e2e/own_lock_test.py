"""examples/own_lock: a separate workspace whose toolchain venv is installed from its own lock
(the rules' pins plus einops) builds a Hugging Face model's program and a model that imports
einops, and their tests pass. The only end-to-end test that installs a venv of its own. Its
OpenVINO program takes OpenVINO's packages from the workspace's own backend lock, and its program
for an app that links ExecuTorch 1.4 takes 1.4 from the team's own build of it (release_locks;
PyPI's 1.4.1 wheel stands in for a fork's); a runtime of that release that the team names no build
of (its arm64 runner's binding, 1.3's runtimes) fails at fetch in one line, never PyPI's instead."""

import contextlib
import json
import os
import pwd

import pytest

from tests.e2e import harness

OWN_LOCK = "examples/own_lock"
ADDED = {"einops==0.8.2"}
# The pin of examples/own_lock/openvino.lock that the toolchain's lock already has: not installed again.
FROM_TOOLCHAIN = "numpy==2.4.6"
FORK_LOCK = "executorch_fork_1_4.lock"  # the team's own build of ExecuTorch 1.4 (WORKSPACE: release_locks)


def _pins(path):
    with open(path, encoding="utf-8") as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def test_the_lock_is_the_rules_lock_plus_its_own_packages():
    root = harness.source_root()
    rules = _pins(os.path.join(root, "toolchain/requirements.lock"))
    own = _pins(os.path.join(root, OWN_LOCK, "requirements.lock"))
    assert own - rules == ADDED and rules - own == set(), (
        f"{OWN_LOCK}/requirements.lock is toolchain/requirements.lock plus {sorted(ADDED)}: "
        f"it adds {sorted(own - rules)} and lacks {sorted(rules - own)}; update it with the rules' lock"
    )


def _pip_settings():
    """The machine's pip settings, for the inner Bazel's pip install: its PIP_* variables, and the
    user's pip.conf (the inner Bazel's HOME is a scratch folder). They say where pip finds what it
    installs (on these machines: torch's CPU build in a local folder)."""
    env = {k: v for k, v in os.environ.items() if k.startswith("PIP_")}
    home = pwd.getpwuid(os.getuid()).pw_dir
    for rel in (".config/pip/pip.conf", ".pip/pip.conf"):
        if "PIP_CONFIG_FILE" not in env and os.path.isfile(os.path.join(home, rel)):
            env["PIP_CONFIG_FILE"] = os.path.join(home, rel)
    return env


def test_the_openvino_lock_is_the_rules_plus_a_pin_the_toolchain_has():
    root = harness.source_root()
    rules = _pins(os.path.join(root, "toolchain/backends/openvino.lock"))
    own = _pins(os.path.join(root, OWN_LOCK, "openvino.lock"))
    assert own - rules == {FROM_TOOLCHAIN} and rules - own == set(), (
        f"{OWN_LOCK}/openvino.lock is toolchain/backends/openvino.lock plus {FROM_TOOLCHAIN}: it adds "
        f"{sorted(own - rules)} and lacks {sorted(rules - own)}; update it with the rules' lock"
    )
    assert FROM_TOOLCHAIN in _pins(os.path.join(root, "toolchain/requirements.lock"))


def test_the_fork_s_lock_has_the_form_of_a_release_lock():
    # One hash-pinned executorch wheel of release 1.4, as toolchain/releases/executorch_1_4.lock.
    root = harness.source_root()
    (pin,) = _pins(os.path.join(root, OWN_LOCK, FORK_LOCK))
    (rules,) = _pins(os.path.join(root, "toolchain/releases/executorch_1_4.lock"))
    assert pin.startswith("executorch==1.4.") and " --hash=sha256:" in pin, pin
    assert pin == rules, f"{FORK_LOCK} stands in for a fork with PyPI's wheel, the rules' own pin: {rules}"


@pytest.fixture(scope="module")
def own_lock():
    """A copy of the rules plus examples/own_lock, whose venv pip installs from its lock."""
    # Install from the lock, as a user's build does.
    env = {"RULES_TORCH_EXPORT_REUSE_VENV": None, **_pip_settings()}
    with harness.Workspace.example(OWN_LOCK, env=env) as ws:
        yield ws


def test_own_lock_builds_and_tests(own_lock):
    result = own_lock.bazel("test", "//...")
    assert result.code == 0, result.stderr[-6000:]
    assert result.tests_run() == [
        "ml/patch_classifier_1_4_numerics_test",
        "ml/patch_classifier_numerics_test",
        "ml/patch_classifier_openvino_numerics_test",
        "ml/qwen3_llm_generation_test",
    ], result.stderr[-3000:]
    assert result.labels("ExecuTorchLower") == ["//ml:patch_classifier_1_4", "//ml:patch_classifier_openvino",
                                                "//ml:patch_classifier_pte", "//ml:qwen3_llm"]

    # The venv was installed from this workspace's lock, not linked to another.
    venv_repo = os.path.join(own_lock.info("output_base"), "external", "torch_export_venv")
    assert not os.path.islink(os.path.join(venv_repo, "venv"))
    with open(os.path.join(venv_repo, "identity.txt"), encoding="utf-8") as f:
        identity = set(f.read().splitlines())
    assert ADDED <= identity and "transformers==5.23.0" in identity, sorted(identity)

    # OpenVINO's packages came from the workspace's openvino.lock: its own pins installed, the pin
    # the toolchain's lock has taken from the toolchain.
    backend_repo = os.path.join(own_lock.info("output_base"), "external", "torch_export_backend_openvino")
    with open(os.path.join(backend_repo, "identity.txt"), encoding="utf-8") as f:
        backend = set(f.read().splitlines())
    assert "installed openvino==2025.4.1" in backend and f"from the toolchain {FROM_TOOLCHAIN}" in backend, sorted(backend)
    assert not os.path.exists(os.path.join(backend_repo, "site-packages", "numpy")), "numpy was installed again"


def test_the_1_4_program_is_lowered_by_the_team_s_own_build(own_lock):
    # The release's repository is installed from the workspace's lock, not the rules' own.
    rule = own_lock.bazel("query", "//external:torch_export_executorch_1_4", "--output=build")
    assert rule.code == 0, rule.stderr[-3000:]
    assert f'lock = "//:{FORK_LOCK}"' in rule.stdout, rule.stdout
    manifest_path = os.path.join(own_lock.info("bazel-bin"), "ml", "patch_classifier_1_4.pte.json")
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    # The record's loaded_by: the matrix measured 1.4's programs loading in 1.3's runtimes.
    assert manifest["executorch_release"] == {"name": "1.4", "oldest_runtime_measured": "1.3"}
    assert manifest["toolchain"]["executorch"] == "1.4.1"


def _declaration(workspace, repository):
    """The WORKSPACE's declaration of `repository`, as `bazel query --output=build` prints it (no fetch)."""
    rule = workspace.bazel("query", f"//external:{repository}", "--output=build")
    assert rule.code == 0, rule.stderr[-3000:]
    return rule.stdout


def _refusals(result):
    """The rules' messages in a failed build's output, each once."""
    assert result.code != 0, result.stderr[-3000:]
    return {line[line.index("rules_torch_export: "):] for line in result.stderr.splitlines() if "rules_torch_export: " in line}


@contextlib.contextmanager
def _release_locks(workspace, replacement):
    """The WORKSPACE with its release_locks line replaced by `replacement`, restored afterwards."""
    original = workspace.read("WORKSPACE")
    workspace.write("WORKSPACE", original.replace(f'release_locks = {{"1.4": "//:{FORK_LOCK}"}},', replacement))
    try:
        yield
    finally:
        workspace.write("WORKSPACE", original)


def test_the_arm64_runner_of_the_team_s_1_4_refuses_pypi_s_binding(own_lock):
    # The WORKSPACE names no aarch64 pin of the team's 1.4 (release_aarch64_pins): the arm64 runner
    # of 1.4 would link PyPI's 1.4.1 binding. Its fetch fails in one line, before any download.
    # Checked first: a declaration of PyPI's binding would download 2.5 GB in the build below.
    assert "refused_repository(" in _declaration(own_lock, "torch_export_executorch_1_4_aarch64")
    result = own_lock.bazel("build", "--platforms=@rules_torch_export//platforms:linux_aarch64",
                            "@rules_torch_export//native:et_runner_1_4")
    assert _refusals(result) == {
        f"rules_torch_export: release_locks replaces ExecuTorch 1.4's lock with //:{FORK_LOCK}, but the "
        "aarch64 binding of 1.4's arm64 runner would be PyPI's build of 1.4 "
        "(toolchain/releases/executorch_1_4_aarch64.lock): add release_aarch64_pins = "
        "{\"1.4\": \"//:<your build's, in that file's form>\"} to torch_export_toolchain_repositories"
    }, result.stderr[-3000:]
    assert "pip download" not in result.stderr, result.stderr[-3000:]
    aarch64_repo = os.path.join(own_lock.info("output_base"), "external", "torch_export_executorch_1_4_aarch64")
    assert not os.path.exists(os.path.join(aarch64_repo, "wheels")), os.listdir(aarch64_repo)


def test_the_arm64_runner_without_toolchain_resolution_fails_at_analysis(own_lock):
    # --platforms without the flag that the README asks for (this workspace's .bazelrc has it)
    # compiles with the host's g++: the release's runtime must not fall back to its x86-64 build,
    # which would give an x86-64 "arm64" runner that only fails when qemu runs it.
    result = own_lock.bazel("build", "--noincompatible_enable_cc_toolchain_resolution",
                            "--platforms=@rules_torch_export//platforms:linux_aarch64",
                            "@rules_torch_export//native:et_runner_1_4")
    assert result.code != 0, "an x86-64 runner was built for aarch64"
    assert "add `build --incompatible_enable_cc_toolchain_resolution` to .bazelrc" in result.stderr, result.stderr[-3000:]
    assert "pip download" not in result.stderr, result.stderr[-3000:]


def test_a_team_s_1_3_refuses_pypi_s_runtimes_and_takes_its_aarch64_pin(own_lock):
    # With the team's 1.3 too, 1.3's runtimes (a venv of their own) would be PyPI's 1.3.1: the
    # runner's fetch fails in one line, before the venv's install. An aarch64 pin that the WORKSPACE
    # names is the one the arm64 runner of 1.4 would link (declared only: no aarch64 fetch here).
    with _release_locks(own_lock, f'release_locks = {{"1.4": "//:{FORK_LOCK}", "1.3": "//:executorch_fork_1_3.lock"}},\n'
                        '    release_aarch64_pins = {"1.4": "//:executorch_fork_1_4_aarch64.lock"},'):
        # Checked first: a declaration of PyPI's 1.3 runtimes would install a 5 GB venv below.
        assert "refused_repository(" in _declaration(own_lock, "torch_export_executorch_1_3_runtime")
        pin = _declaration(own_lock, "torch_export_executorch_1_4_aarch64")
        result = own_lock.bazel("build", "@rules_torch_export//native:et_runner_1_3")
    assert _refusals(result) == {
        "rules_torch_export: release_locks replaces ExecuTorch 1.3's lock with //:executorch_fork_1_3.lock, but "
        "the venv of 1.3's Python runtime and native runner would be PyPI's build of 1.3 "
        "(toolchain/releases/executorch_1_3_runtime.lock): add release_runtime_locks = "
        "{\"1.3\": \"//:<your build's, in that file's form>\"} to torch_export_toolchain_repositories"
    }, result.stderr[-3000:]
    assert "pip install" not in result.stderr, result.stderr[-3000:]
    assert 'executorch_pin = "//:executorch_fork_1_4_aarch64.lock"' in pin, pin


def test_a_key_that_names_no_release_fails_in_one_line(own_lock):
    # "1.5" is the toolchain's own release, which `lock` replaces: the key used to be ignored
    # without a word, and the team's build silently not used.
    with _release_locks(own_lock, f'release_locks = {{"1.4": "//:{FORK_LOCK}", "1.5": "//:{FORK_LOCK}"}},'):
        result = own_lock.bazel("query", "//external:torch_export_executorch_1_4")
    assert _refusals(result) == {
        "rules_torch_export: torch_export_toolchain_repositories' release_locks has \"1.5\", which it does "
        "not take; its keys are \"1.3\", \"1.4\" (the toolchain's own release is replaced by `lock`)"
    }, result.stderr[-3000:]
