"""Remote execution on a real REAPI executor (buildbox-casd + buildbox-run), end to end.

One executor, one image venv and two Bazel output bases serve every case:
- "first" builds the zoo locally (persistent worker), then with --config=rbe-local and
  --noremote_accept_cached: every exporter spawn ran remotely, and gave the local bytes;
- "second", a checkout at another path, gets every result from the executor's cache;
- a test runs locally beside remote actions; a model that dials out fails remotely as it does
  locally, and the executor's sandbox blocks the network of any action;
- the executor is killed mid-build: the build fails with Bazel's remote error, or with
  --remote_local_fallback finishes locally; after a restart the next build succeeds.

The targets default to one action of each exporter mnemonic, or two: //zoo_remote:app, a
bundle of the e2e zoo's quantized conv program and its language model, and //zoo:mlp_ep, the
export the executor is killed in (nine actions); and the zoo's Ethos-U program,
//models/kws:kws_ethos_u55 (four more), whose lowering needs Arm's packages from their own lock. The nightly tier's remote_execution_zoo_test
builds the whole zoo (//zoo:all, 18 actions). `//models/...` took 5 to 15 minutes remotely on a
shared 2-core machine (and its local reference build 3 to 9), too long for CI; run it with
--test_env=RULES_TORCH_EXPORT_REMOTE_TARGETS=//models/... (docs/remote-execution.md).
"""

import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import time

import pytest

from tests.e2e import harness, network_probe, zoo_workspace
from tests.remote_e2e import buildbox_executor, image_venv

EVERY_MNEMONIC = ["//zoo_remote:app", "//zoo:mlp_ep"]
# The zoo's Ethos-U program (its export, calibration, Arm's quantizer and Vela's lowering): the
# backend's packages reach the executor as the actions' declared inputs (toolchain/layered_locks.bzl).
ETHOS_U = "//models/kws:kws_ethos_u55"
DEFAULT_TARGETS = EVERY_MNEMONIC + [ETHOS_U]
TARGETS = os.environ.get("RULES_TORCH_EXPORT_REMOTE_TARGETS", " ".join(DEFAULT_TARGETS)).split()
# The exporter actions each known target set runs: every mnemonic, at least once.
ACTIONS = {
    ("//zoo:all",): dict(zoo_workspace.ACTIONS, ModelBundle=1),
    tuple(DEFAULT_TARGETS): {"TorchExport": 4, "CalibrationData": 2, "TorchQuantize": 2,
                             "ExecuTorchLower": 3, "TokenizerCheck": 1, "ModelBundle": 1},
}
EXPECTED = ACTIONS.get(tuple(TARGETS))

# A bundle of programs that, with //zoo:mlp_ep, run every exporter mnemonic.
ZOO_REMOTE_BUILD = """
load("//rules:defs.bzl", "model_bundle")

model_bundle(
    name = "app",
    programs = ["//zoo:conv_q8_pte", "//zoo:lm_pte"],
)
"""

# Every action that runs the exporter (rules/private/lib/exporter_action.bzl: `<python>
# .../exporter/main.py ...`), and so the image's Python when remote, whatever its mnemonic.
EXPORTER_MAIN = "exporter/main.py"
MANIFEST_SUFFIXES = (".pt2.json", ".pte.json", ".calib.json")

INCLUDE = harness.DEFAULT_INCLUDE + ("models", "tests/remote_e2e")

# The action the executor is killed in: one small export.
KILL_TARGET = "//zoo:mlp_ep"
KILL_OUTPUTS = [
    "bazel-out/k8-fastbuild/bin/zoo/mlp_ep.pt2",
    "bazel-out/k8-fastbuild/bin/zoo/mlp_ep.pt2.json",
]
KILL_LOG = "bazel-out/k8-fastbuild/bin/zoo/mlp_ep.export.log"  # the action's third output

# Bazel's exit code for a remote execution or cache failure.
REMOTE_ERROR_EXIT = 34


@pytest.fixture(scope="module")
def image_future():
    """The image venv, made (or found) beside the local build: pip takes a minute or two."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        yield pool.submit(image_venv.ensure)


@pytest.fixture(scope="module")
def image(image_future):
    return image_future.result()


@pytest.fixture(scope="module")
def executor(image):
    with buildbox_executor.BuildboxExecutor(harness.scratch_dir(), mounts=image.mounts) as ex:
        yield ex


def _checkout(name):
    workspace = harness.Workspace.create(name, include=INCLUDE)
    zoo_workspace.install(workspace)
    workspace.write("zoo_remote/BUILD", ZOO_REMOTE_BUILD)
    return workspace


def _record_identity(workspace, image):
    # docs/remote-execution.md: the image's identity is what the action keys name. Equal to the
    # committed file unless the lock changed (then the identity case below fails, and says
    # what to do), so that the other cases still test remote execution.
    workspace.write("toolchain/remote/image_identity.txt", image.identity)


@pytest.fixture(scope="module")
def ws(image_future):
    with _checkout("first") as workspace:
        yield workspace


@pytest.fixture(scope="module")
def remote(executor, image):
    """The flags of a remote build: .bazelrc's config, and this executor's port."""
    flags = ["--config=rbe-local", f"--remote_executor={executor.url}"]
    if image.root != image_venv.DEFAULT_ROOT:  # RULES_TORCH_EXPORT_IMAGE_ROOT moved it
        flags.append(f"--//toolchain/remote:interpreter_path={image.interpreter}")
    return flags


def _runs_exporter(spawn):
    return any(arg == EXPORTER_MAIN or arg.endswith("/" + EXPORTER_MAIN)
               for arg in spawn.get("commandArgs", ()))


def _exporter_spawns(result):
    return [s for s in result.spawns if _runs_exporter(s)]


def _products(result):
    """The exporter spawns' outputs but their logs (torch's console, with PIDs and times)."""
    return [p for p in result.outputs_of(_exporter_spawns(result)) if not p.endswith(".log")]


def _counts(spawns):
    """Spawns per mnemonic, but worker warm-ups (which share their worker's mnemonic)."""
    return collections.Counter(s["mnemonic"] for s in spawns if not harness.is_warm_up(s))


def _comparable(workspace, path):
    """A file's sha256; for a manifest, its JSON minus inputs.settings.

    The settings digest covers the action's config, which names the toolchain's identity
    file by path: external/torch_export_venv/identity.txt locally,
    toolchain/remote/image_identity.txt remotely. Their contents are equal (the manifests'
    toolchain_identity says so), so that one field differs between a local and a remote build.
    """
    if not path.endswith(MANIFEST_SUFFIXES):
        return workspace.sha256(path)
    manifest = json.loads(workspace.read(path))
    manifest["inputs"].pop("settings")
    return manifest


@pytest.fixture(scope="module")
def local_build(ws):
    result = ws.build(*TARGETS)
    products = _products(result)
    return result, {p: _comparable(ws, p) for p in products}


@pytest.fixture(scope="module")
def remote_build(ws, image, remote, local_build):
    _record_identity(ws, image)
    result = ws.build(*TARGETS, *remote, "--noremote_accept_cached")
    return result, ws.digests(_products(result))


def test_every_exporter_action_runs_remotely_and_gives_the_local_bytes(
    ws, local_build, remote_build
):
    local, local_digests = local_build
    result, _ = remote_build
    spawns = _exporter_spawns(result)
    assert {s["runner"] for s in spawns} == {"remote"}
    assert not [s for s in spawns if s.get("remoteCacheHit")]
    assert _counts(spawns) == _counts(_exporter_spawns(local))
    if EXPECTED:
        assert set(EXPECTED) == set(zoo_workspace.ACTIONS) | {"ModelBundle"}  # every mnemonic
        assert _counts(spawns) == EXPECTED
    for spawn in spawns:  # it ran where the image is, and the image was what it ran
        properties = {p["name"]: p["value"] for p in spawn["platform"]["properties"]}
        assert properties["OSFamily"] == "linux"
        assert spawn["commandArgs"][0].endswith("toolchain/remote/python.sh")
    assert f"{len(spawns)} remote" in result.stderr
    products = _products(result)
    assert sorted(products) == sorted(local_digests)
    assert any(p.endswith(".pte") for p in products)
    assert {p: _comparable(ws, p) for p in products} == local_digests
    if ETHOS_U in TARGETS:  # Vela compiled it remotely: its figures are in the remote build's manifest
        assert "vela" in json.loads(ws.read("bazel-bin/models/kws/kws_ethos_u55.pte.json"))


def test_a_second_checkout_gets_every_result_from_the_remote_cache(remote, image, remote_build):
    first, first_digests = remote_build
    with _checkout("second") as second:
        _record_identity(second, image)
        result = second.build(*TARGETS, *remote)
        assert result.spawns, "nothing was built"
        # The deadline's stamp is written locally by design (toolchain/deadline.bzl): it is
        # the one spawn a second checkout runs, in no time.
        local = [s for s in result.spawns if not s.get("remoteCacheHit")]
        assert [s.get("mnemonic") for s in local] == ["ExporterDeadline"]
        assert _counts(_exporter_spawns(result)) == _counts(_exporter_spawns(first))
        assert f"{len(result.spawns) - len(local)} remote cache hit" in result.stderr
        assert second.digests(_products(result)) == first_digests


# After the remote build: asked first, the image would not be made beside the local build.
def test_the_committed_image_identity_names_the_image_made_from_the_lock(image):
    committed = os.path.join(harness.snapshot(INCLUDE), "toolchain/remote/image_identity.txt")
    with open(committed, encoding="utf-8") as f:
        assert f.read() == image.identity, (
            "toolchain/remote/image_identity.txt does not name the image made from "
            f"toolchain/requirements.lock; record it: cp {image.identity_path} "
            "toolchain/remote/image_identity.txt"
        )


def test_tests_run_locally_beside_remote_actions(ws, remote, remote_build):
    result = ws.bazel("test", "//zoo:mlp_pte_test", *remote)
    assert result.code == 0, result.stderr[-4000:]
    assert result.tests_run() == ["zoo/mlp_pte_test"]
    assert {s["runner"] for s in result.spawns_by_mnemonic("TestRunner")} == {"linux-sandbox"}


# No exporter here: only the executor's sandbox stands between this action and the network.
_DIAL = """
genrule(name = "dial", outs = ["dial.txt"], cmd = "exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected > $@")
"""


@pytest.fixture
def listener():
    with network_probe.listener() as server:
        yield server


def _error_lines(stderr, prefix):
    return [line for line in stderr.splitlines() if line.startswith(prefix)]


def test_a_model_that_reaches_for_the_network_fails_remotely_as_locally(
    ws, remote, remote_build, listener
):
    port = listener.getsockname()[1]
    network_probe.install(ws, port, _DIAL.replace("{port}", str(port)))
    local = ws.bazel("build", "//zoo_net:fetch_ep")
    result = ws.bazel("build", "//zoo_net:fetch_ep", *remote)
    assert local.code != 0 and result.code != 0
    assert [s["runner"] for s in result.spawns_by_mnemonic("TorchExport")] == ["remote"]
    (error,) = _error_lines(result.stderr, "ERROR: //zoo_net:fetch_ep:")
    assert _error_lines(local.stderr, "ERROR: //zoo_net:fetch_ep:") == [error]
    assert "calling 'zoo_net.fetch:Fetch' raised" in error
    assert "Traceback" not in result.stderr
    # An action that does not block the network itself: the executor's sandbox does.
    dial = ws.bazel("build", "//zoo_net:dial", *remote)
    assert dial.code != 0
    # The action's own loopback is up, and nothing listens there.
    assert f"/dev/tcp/127.0.0.1/{port}: Connection refused" in dial.stderr, dial.stderr[-4000:]
    assert [s["runner"] for s in dial.spawns_by_mnemonic("Genrule")] == ["remote"]
    assert not network_probe.connected(listener)
    # The control: outside Bazel, the same model code reaches the listener.
    subprocess.run(
        [sys.executable, "-c", "from zoo_net.fetch import Fetch; Fetch()"], cwd=ws.path, check=True
    )
    assert network_probe.connected(listener)


def _build_and_kill_executor(ws, executor, remote, *flags):
    """Starts a remote build of KILL_TARGET without its outputs, SIGKILLs the executor while it
    runs an action, and returns (exit code, stderr, spawns of the execution log).

    Its export's outputs are deleted (Bazel sees that and runs the action again) rather than
    `bazel clean`ed: a clean also dropped the analysis, which the build then redid.
    """
    ws.forget(*KILL_OUTPUTS, KILL_LOG)
    log_path = os.path.join(harness.scratch_dir(), f"kill-{len(flags)}.json")
    build = ws.popen(
        "build", KILL_TARGET, *remote, "--noremote_accept_cached",
        f"--execution_log_json_file={log_path}", *flags,
    )
    started = time.monotonic()
    deadline = started + 300
    while executor.running_actions() == 0:
        assert build.poll() is None, "the build ended before any remote action ran"
        assert time.monotonic() < deadline, "no remote action started"
        time.sleep(0.05)
    killed_after = time.monotonic() - started
    executor.kill()
    _, stderr = build.communicate(timeout=harness.BAZEL_TIMEOUT)
    print(f"{KILL_TARGET} {' '.join(flags)}: executor killed after {killed_after:.1f} s, "
          f"exit {build.returncode} after {time.monotonic() - started:.1f} s", file=sys.stderr)
    with open(log_path, encoding="utf-8") as f:
        spawns = harness.parse_execution_log(f.read())
    return build.returncode, stderr, spawns


def test_a_killed_executor_fails_the_build_and_a_restart_recovers(
    ws, executor, remote, remote_build
):
    _, digests = remote_build
    try:
        code, stderr, _ = _build_and_kill_executor(ws, executor, remote)
    finally:
        executor.start()  # same port, same cache folder
    assert code == REMOTE_ERROR_EXIT, stderr[-4000:]
    (error,) = _error_lines(stderr, "ERROR: ")
    # Bazel names the action, and gRPC's status for a server that went away.
    assert "Exporting //zoo:mlp_ep" in error and "UNAVAILABLE" in error, error
    assert not os.path.exists(os.path.join(ws.path, "bazel-bin/zoo/mlp_ep.pt2"))
    result = ws.build(KILL_TARGET, *remote, "--noremote_accept_cached")
    assert {s["runner"] for s in _exporter_spawns(result)} == {"remote"}
    assert ws.digests(KILL_OUTPUTS) == {p: digests[p] for p in KILL_OUTPUTS}


def test_a_killed_executor_with_local_fallback_finishes_the_build_locally(
    ws, executor, remote, remote_build
):
    _, digests = remote_build
    try:
        code, stderr, spawns = _build_and_kill_executor(
            ws, executor, remote, "--remote_local_fallback"
        )
    finally:
        executor.start()
    assert code == 0, stderr[-4000:]
    exporter = [s for s in spawns if _runs_exporter(s)]
    assert [(s["mnemonic"], s["runner"]) for s in exporter] == [("TorchExport", "local")]
    # The image's interpreter sits at the same path here, so the local run gives the same bytes.
    assert ws.digests(KILL_OUTPUTS) == {p: digests[p] for p in KILL_OUTPUTS}
