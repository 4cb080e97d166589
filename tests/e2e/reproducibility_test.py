"""Byte-identical outputs and shared caches, proven with the real Bazel and a real nginx cache.

Three checkouts of the same sources, at different absolute paths, each with its own output base:
  A  builds one-shot in the sandbox, uploading to an nginx HTTP cache and to the
     --config=cache disk cache;
  B  builds in the persistent worker (the default strategy) under another PYTHONHASHSEED;
  C  gets everything from the caches, then faces a dead, a dying and a corrupted cache.
A and B also build //zoo/options, one export (and program) per torch_export option: the table
in tests/e2e/zoo/options/BUILD.zoo, so a new option is one row there; and one Core ML program,
whose model package coremltools names and dates. B also builds the zoo's Core ML programs and
two of its Arm programs, which the outer build made at this checkout's path (they are the
data of //tests/e2e:reproducibility_matrix_test, the nightly tier's target that runs those two
cases; tests/e2e/BUILD selects each target's cases).
"""

import json
import os
import time
import zipfile

import pytest

from tests.e2e import harness, nginx_cache, zoo_workspace

TARGETS = zoo_workspace.EXPORTS + zoo_workspace.PROGRAMS + ["//zoo:app"]
EXPORTER_MNEMONICS = tuple(zoo_workspace.ACTIONS)


@pytest.fixture(scope="module")
def cache():
    with nginx_cache.NginxCache(harness.scratch_dir()) as server:
        yield server


def _checkout(name, include=harness.DEFAULT_INCLUDE):
    ws = harness.Workspace.create(name, include=include)
    zoo_workspace.install(ws)
    return ws


def _digests(ws):
    return ws.digests(zoo_workspace.OUTPUTS + zoo_workspace.bundle_files(ws))


@pytest.fixture(scope="module")
def checkout_a(cache):
    with _checkout("a") as ws:
        remote = ("--config=remote", f"--remote_cache={cache.url}")
        result = ws.build(*TARGETS, "--spawn_strategy=sandboxed", *remote, "--config=cache")
        yield ws, result, _digests(ws)


@pytest.fixture(scope="module")
def checkout_b():
    # Deeper and longer than A's path, so no path of A can survive in an output by accident.
    with _checkout("elsewhere/second_checkout/b", include=harness.DEFAULT_INCLUDE + ("models",)) as ws:
        seed = {"PYTHONHASHSEED": "12345"}
        result = ws.build(*TARGETS, "--action_env=PYTHONHASHSEED=12345", env=seed)
        yield ws, result, _digests(ws)


@pytest.fixture(scope="module")
def checkout_c(checkout_a, cache):
    with _checkout("c") as ws:
        yield ws


OPTIONS = "//zoo/options:all"


def _option_outputs(ws):
    """Workspace-relative paths of every .pt2 and .pte that //zoo/options built."""
    folder = os.path.join(ws.path, "bazel-bin", "zoo", "options")
    return sorted(f"bazel-bin/zoo/options/{name}" for name in os.listdir(folder)
                  if name.endswith((".pt2", ".pte")))


@pytest.fixture(scope="module")
def option_builds(checkout_a, checkout_b):
    """//zoo/options built one-shot in A (sandboxed) and B (local, another hash seed)."""
    ws_a, ws_b = checkout_a[0], checkout_b[0]
    result_a = ws_a.build(OPTIONS, "--spawn_strategy=sandboxed")
    seed = {"PYTHONHASHSEED": "12345"}
    result_b = ws_b.build(OPTIONS, "--spawn_strategy=local", "--action_env=PYTHONHASHSEED=12345", env=seed)
    return (ws_a, result_a), (ws_b, result_b)


def _differences(expected, actual):
    return sorted(k for k in set(expected) | set(actual) if expected.get(k) != actual.get(k))


def test_checkout_a_runs_every_exporter_action_one_shot_in_the_sandbox(checkout_a):
    _, result, _ = checkout_a
    for mnemonic in EXPORTER_MNEMONICS:
        spawns = result.executed(mnemonic)
        assert len(spawns) == zoo_workspace.ACTIONS[mnemonic], mnemonic
        assert {s["runner"] for s in spawns} == {"linux-sandbox"}


def test_outputs_identical_across_checkouts_strategies_and_hash_seeds(checkout_a, checkout_b):
    """B differs from A in path, output base, strategy (the worker, not one-shot), client
    PYTHONHASHSEED and build time."""
    _, _, digests_a = checkout_a
    _, result_b, digests_b = checkout_b
    for mnemonic in EXPORTER_MNEMONICS:
        # The light actions run one-shot (registry.py registers them with worker=False);
        # CalibrationData runs in the export's worker, so its bytes are checked across both too.
        runner = "linux-sandbox" if mnemonic == "TokenizerCheck" else "worker"
        assert {s["runner"] for s in result_b.executed(mnemonic)} == {runner}, mnemonic
        assert len(result_b.executed(mnemonic)) == zoo_workspace.ACTIONS[mnemonic], mnemonic
    assert len(digests_a) == len(zoo_workspace.OUTPUTS) + zoo_workspace.BUNDLE_FILES
    assert _differences(digests_a, digests_b) == []


def test_every_export_option_gives_the_same_bytes_in_two_servers_at_two_paths(option_builds):
    (ws_a, result_a), (ws_b, result_b) = option_builds
    outputs = _option_outputs(ws_a)
    pt2s, ptes = [o for o in outputs if o.endswith(".pt2")], [o for o in outputs if o.endswith(".pte")]
    assert len(pt2s) >= 8 and len(ptes) >= 7, outputs  # the table's rows, at the least
    assert "bazel-bin/zoo/options/coreml_pte.pte" in ptes  # Core ML's model package, renamed by content
    for result in (result_a, result_b):  # both really ran every action: no cache between them
        assert len(result.executed("TorchExport")) == len(pt2s)
        assert len(result.executed("ExecuTorchLower")) == len(ptes)
    assert _option_outputs(ws_b) == outputs
    assert _differences(ws_a.digests(outputs), ws_b.digests(outputs)) == []


# Zoo programs whose backends write files of their own inside the lowering, checked at a second
# path: Core ML's four (ResNet-18 and MobileNetV2, fp32 and fp16; coremltools names its model
# packages with uuid4 and zips them with the time; docs/backends.md, "Core ML"; issue 43), and
# the keyword spotter for TOSA and, through Vela, an Ethos-U55 (docs/backends.md, "Arm"; issue 44).
ZOO_AT_ANOTHER_PATH = ["models/resnet_coreml_fp16.pte", "models/resnet_coreml_fp32.pte",
                       "models/mobilenet/mobilenet_coreml_fp16.pte", "models/mobilenet/mobilenet_coreml_fp32.pte",
                       "models/kws/kws_tosa.pte", "models/kws/kws_ethos_u55.pte"]


def test_the_zoo_s_core_ml_and_arm_programs_have_the_same_bytes_at_another_path(checkout_b):
    """The outer build lowered them at this checkout's path, in its worker; B lowers them again
    at its own path, in a server and output base of its own."""
    ws_b = checkout_b[0]
    labels = ["//{}:{}".format(*rel.removesuffix(".pte").rsplit("/", 1)) for rel in ZOO_AT_ANOTHER_PATH]
    result = ws_b.build(*labels)
    assert sorted(result.labels("ExecuTorchLower")) == sorted(labels)  # really lowered, no cache
    for rel in ZOO_AT_ANOTHER_PATH:
        assert ws_b.sha256(f"bazel-bin/{rel}") == harness.sha256_file(rel), rel  # rel: this test's runfiles


def _machine_paths(ws):
    paths = {ws.path, ws.output_base, ws.execroot, harness.outer_venv(), harness.scratch_dir()}
    return {p.encode() for p in paths} | {b"/sandbox/", b"execroot/", b"/tmp/"}


def _blobs(path):
    """The file's bytes, and for a zip (.pt2) each member's uncompressed bytes too."""
    with open(path, "rb") as f:
        yield path, f.read()
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                yield f"{path}!{info.filename}", archive.read(info)


def test_outputs_hold_no_machine_paths(checkout_a):
    ws, _, digests = checkout_a
    for rel in digests:
        for where, data in _blobs(os.path.join(ws.path, rel)):
            for path in _machine_paths(ws):
                assert path not in data, f"{where} contains {path!r}"


def test_pt2_archives_carry_no_clock_time(checkout_a):
    ws, _, _ = checkout_a
    for name in ("conv_ep", "gate_ep", "mlp_ep"):
        with zipfile.ZipFile(os.path.join(ws.path, f"bazel-bin/zoo/{name}.pt2")) as archive:
            stamps = {info.date_time for info in archive.infolist()}
        assert len(stamps) == 1 and next(iter(stamps))[0] == 1980, stamps  # the DOS epoch


def test_manifests_carry_output_and_input_digests(checkout_a):
    ws, _, _ = checkout_a
    identity_file = os.path.join(ws.execroot, "external/torch_export_venv/identity.txt")
    identity = harness.sha256_file(identity_file)
    conv = json.loads(ws.read("bazel-bin/zoo/conv_ep.pt2.json"))
    assert conv["pt2"]["sha256"] == ws.sha256("bazel-bin/zoo/conv_ep.pt2")
    sources = ("zoo/__init__.py", "zoo/common/__init__.py", "zoo/common/layers.py", "zoo/conv.py")
    assert conv["inputs"]["sources"] == {rel: ws.sha256(rel) for rel in sources}
    assert conv["inputs"]["checkpoint"] == ws.sha256("zoo/conv.pt")
    assert conv["inputs"]["toolchain_identity"] == identity
    assert len(conv["inputs"]["spec"]) == 64
    pte = json.loads(ws.read("bazel-bin/zoo/conv_pte.pte.json"))
    assert pte["pte"]["sha256"] == ws.sha256("bazel-bin/zoo/conv_pte.pte")
    assert pte["inputs"]["pt2"] == conv["pt2"]["sha256"]
    assert pte["inputs"]["toolchain_identity"] == identity
    assert "sources" not in pte["inputs"]  # a lowering reads the .pt2, not the model's sources


def test_bundle_names_each_program_by_its_digest(checkout_a):
    ws, _, _ = checkout_a
    index = json.loads(ws.read("bazel-bin/zoo/app/index.json"))
    assert sorted(index["programs"]) == zoo_workspace.PROGRAMS
    files = {"index.json"}
    for label, entry in index["programs"].items():
        name = label.split(":")[1]
        digest = ws.sha256(f"bazel-bin/zoo/{name}.pte")
        assert entry["sha256"] == digest and entry["file"] == f"{digest}.pte"
        assert ws.sha256(f"bazel-bin/zoo/app/{entry['file']}") == digest
        recorded = json.loads(ws.read(f"bazel-bin/zoo/{name}.pte.json"))
        assert entry["backends"] == recorded["backends"]
        files.add(entry["file"])
        if "ptd" in entry:  # external weights, named by their digest too
            assert entry["ptd"]["sha256"] == ws.sha256(f"bazel-bin/zoo/{name}.ptd")
            files.add(entry["ptd"]["file"])
        if "tokenizer" in entry:  # an llm_program's tokenizer ships beside it, by digest
            digest = ws.sha256("zoo/tokenizer.json")
            assert entry["tokenizer"]["file"] == f"{digest}.json" and entry["tokenizer"]["eos_ids"] == [1]
            assert ws.sha256(f"bazel-bin/zoo/app/{digest}.json") == digest
            files.add(entry["tokenizer"]["file"])
    assert "tokenizer" in index["programs"]["//zoo:lm_pte"]
    assert sorted(os.listdir(os.path.join(ws.path, "bazel-bin/zoo/app"))) == sorted(files)


def test_another_checkout_gets_every_exporter_action_from_the_remote_cache(
    checkout_a, checkout_c, cache
):
    _, _, digests_a = checkout_a
    result = checkout_c.build(*TARGETS, "--config=remote", f"--remote_cache={cache.url}")
    for mnemonic in EXPORTER_MNEMONICS + ("ModelBundle",):
        assert result.spawns_by_mnemonic(mnemonic), mnemonic
        assert result.executed(mnemonic) == [], f"{mnemonic} ran in C instead of a cache hit"
    assert _differences(digests_a, _digests(checkout_c)) == []


def test_config_cache_disk_cache_serves_another_checkout(checkout_a, checkout_c):
    """A built with --config=cache (~/.cache/...; `~` is the workspaces' home here)."""
    _, _, digests_a = checkout_a
    assert os.listdir(os.path.join(checkout_c.home, ".cache/rules_torch_export/disk_cache"))
    checkout_c.forget("bazel-bin/zoo")
    result = checkout_c.build(*TARGETS, "--config=cache")
    for mnemonic in EXPORTER_MNEMONICS:
        hits = len(result.cache_hits(mnemonic))
        assert hits == zoo_workspace.ACTIONS[mnemonic] and result.executed(mnemonic) == [], mnemonic
    assert _differences(digests_a, _digests(checkout_c)) == []


def _assert_same_as_a(ws, checkout_a, rels):
    _, _, digests_a = checkout_a
    assert {rel: ws.sha256(rel) for rel in rels} == {rel: digests_a[rel] for rel in rels}


# Cache faults are about the cache, not the strategy: one-shot actions skip the worker's warm-up.
ONE_SHOT = ("--spawn_strategy=sandboxed",)
MLP_EXPORT = ["bazel-bin/zoo/mlp_ep.pt2", "bazel-bin/zoo/mlp_ep.pt2.json"]
MLP_OUTPUTS = MLP_EXPORT + ["bazel-bin/zoo/mlp_pte.pte", "bazel-bin/zoo/mlp_pte.pte.json"]


def test_build_succeeds_when_the_cache_server_is_down(checkout_a, checkout_c):
    checkout_c.forget("bazel-bin/zoo")
    dead = f"http://127.0.0.1:{nginx_cache.free_port()}"
    result = checkout_c.build("//zoo:mlp_ep", f"--remote_cache={dead}", *ONE_SHOT)
    assert result.labels("TorchExport") == ["//zoo:mlp_ep"]
    assert "Remote Cache" in result.stderr  # Bazel warned, and built locally
    _assert_same_as_a(checkout_c, checkout_a, MLP_EXPORT)


def test_build_succeeds_when_the_cache_server_dies_mid_build(checkout_a, checkout_c):
    checkout_c.forget("bazel-bin/zoo")
    dying = nginx_cache.NginxCache(os.path.join(harness.scratch_dir(), "dying")).start()
    try:
        build = checkout_c.popen("build", "//zoo:mlp_pte", f"--remote_cache={dying.url}", *ONE_SHOT)
        access_log = os.path.join(dying.prefix, "access.log")
        # Kill the server right after the first upload: the export ran, the lowering has not.
        deadline = time.monotonic() + 600
        while build.poll() is None and time.monotonic() < deadline:
            if os.path.exists(access_log) and "PUT" in open(access_log).read():
                break
            time.sleep(0.05)
        assert build.poll() is None, "the build ended before it uploaded anything"
        dying.kill()
        _, stderr = build.communicate(timeout=900)
    finally:
        dying.stop()
    assert build.returncode == 0, stderr[-4000:]
    assert "Remote Cache" in stderr  # uploads or lookups after the kill failed, and were skipped
    _assert_same_as_a(checkout_c, checkout_a, MLP_OUTPUTS)


def test_a_corrupted_cache_entry_is_never_used(checkout_a, checkout_c, cache):
    ws_a, _, digests_a = checkout_a
    pte_digest = digests_a["bazel-bin/zoo/mlp_pte.pte"]
    blob = os.path.join(cache.root, "cas", pte_digest)
    with open(blob, "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0xFF  # same size, one byte off
    with open(blob, "wb") as f:
        f.write(data)
    checkout_c.forget("bazel-bin/zoo")
    result = checkout_c.build("//zoo:mlp_pte", f"--remote_cache={cache.url}", *ONE_SHOT)
    assert result.executed("TorchExport") == []  # its entry is intact, so it is a hit
    assert result.labels("ExecuTorchLower") == ["//zoo:mlp_pte"]  # the corrupt one re-ran
    assert "does not match" in result.stderr
    _assert_same_as_a(checkout_c, checkout_a, MLP_OUTPUTS)
    assert harness.sha256_file(blob) == pte_digest  # and the re-run's upload repaired the entry
