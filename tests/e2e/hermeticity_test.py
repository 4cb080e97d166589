"""Hermetic exporter actions, as remote execution needs them.

- Each action needs only its declared inputs, and writes only its declared outputs: it is
  replayed from the execution log in an empty folder holding just those inputs (plus the venv,
  which a container image would provide), with HOME and TMPDIR pointed at folders that must
  stay empty, and under other PYTHONHASHSEED values; it must give Bazel's bytes.
- In the sandbox a model cannot reach the network, and says so in one line.
- The container-image toolchain (//toolchain/remote) builds under the sandbox, without network,
  on an execution platform with exec_properties, and gives the same bytes.
"""

import os
import subprocess
import sys

import pytest

from tests.e2e import harness, network_probe, zoo_workspace

MLP = [
    "bazel-bin/zoo/mlp_ep.pt2",
    "bazel-bin/zoo/mlp_ep.pt2.json",
    "bazel-bin/zoo/mlp_pte.pte",
    "bazel-bin/zoo/mlp_pte.pte.json",
]
VENV_LINK = "external/torch_export_venv/venv"

@pytest.fixture(scope="module")
def ws():
    with harness.Workspace.create("hermetic") as workspace:
        zoo_workspace.install(workspace)
        yield workspace


@pytest.fixture(scope="module")
def built(ws):
    """A one-shot sandboxed build of the mlp chain, and its outputs' digests."""
    result = ws.build("//zoo:mlp_pte", "--spawn_strategy=sandboxed")
    return result, ws.digests(MLP)


def _tree(folder):
    """Every file and symlink under folder, relative to it (symlinks are not followed)."""
    found = set()
    for dirpath, dirnames, filenames in os.walk(folder):
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in filenames + links:
            found.add(os.path.relpath(os.path.join(dirpath, name), folder))
    return found


@pytest.mark.parametrize(
    "mnemonic,seed",
    [("TorchExport", "1"), ("TorchExport", "271828"), ("ExecuTorchLower", "3")],
)
def test_action_needs_only_declared_inputs_and_writes_only_declared_outputs(
    ws, built, mnemonic, seed
):
    result, _ = built
    (spawn,) = result.spawns_by_mnemonic(mnemonic)
    scratch = os.path.join(harness.scratch_dir(), "replay", f"{mnemonic}-{seed}")
    home, tmp = scratch + "-home", scratch + "-tmp"
    for folder in (scratch, home, tmp):
        os.makedirs(folder)
    done = ws.replay(
        spawn,
        scratch,
        env={"PYTHONHASHSEED": seed, "HOME": home, "TMPDIR": tmp},
        links={VENV_LINK: harness.outer_venv()},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    products = [o for o in spawn["actualOutputs"] if not o["path"].endswith(".log")]
    # The program and its manifest (and a lowering's selected operators); the .log is torch's console.
    assert len(products) == {"TorchExport": 2, "ExecuTorchLower": 3}[mnemonic]
    for output in products:   # output, with torch's timestamps and PIDs: a diagnostic
        digest = harness.sha256_file(os.path.join(scratch, output["path"]))
        assert digest == output["digest"]["hash"], f"{output['path']} differs, seed {seed}"
    declared = {i["path"] for i in spawn["inputs"]} | {o["path"] for o in spawn["actualOutputs"]}
    assert _tree(scratch) - declared == {VENV_LINK}  # nothing written beside the outputs
    assert os.listdir(home) == [], "the exporter wrote under $HOME"
    assert os.listdir(tmp) == [], "the exporter left files in $TMPDIR (torch caches?)"


@pytest.fixture
def listener():
    with network_probe.listener() as server:
        yield server


def test_a_model_cannot_reach_the_network_in_the_sandbox(ws, listener):
    network_probe.install(ws, listener.getsockname()[1])
    result = ws.bazel("build", "//zoo_net:fetch_ep", "--spawn_strategy=sandboxed")
    assert result.code != 0
    assert not network_probe.connected(listener)
    lines = result.stderr.splitlines()
    errors = [line for line in lines if line.startswith("ERROR: //zoo_net:fetch_ep:")]
    assert len(errors) == 1, result.stderr[-4000:]
    # Refused (loopback only) or unreachable (no interface at all): either way, not connected.
    assert "calling 'zoo_net.fetch:Fetch' raised" in errors[0]
    assert "ConnectionRefusedError" in errors[0] or "Network is unreachable" in errors[0]
    assert "Traceback" not in result.stderr
    # The control: outside Bazel, the same model code reaches the listener.
    subprocess.run(
        [sys.executable, "-c", "from zoo_net.fetch import Fetch; Fetch()"], cwd=ws.path, check=True
    )
    assert network_probe.connected(listener)


def test_container_image_toolchain_builds_in_the_sandbox_without_network(ws, built):
    _, digests = built
    result = ws.build(
        "//zoo:mlp_pte",
        "--spawn_strategy=sandboxed",
        "--extra_execution_platforms=//toolchain/remote:image_platform",
        "--extra_toolchains=//toolchain/remote:toolchain",
        # Here the "image" is this machine: the interpreter at the venv's fixed path.
        f"--//toolchain/remote:interpreter_path={harness.outer_venv()}/bin/python3",
        "--//toolchain/remote:identity=@torch_export_venv//:identity.txt",
    )
    for mnemonic in ("TorchExport", "ExecuTorchLower"):
        (spawn,) = result.executed(mnemonic)
        assert spawn["runner"] == "linux-sandbox"
        assert spawn["commandArgs"][0].endswith("toolchain/remote/python.sh")
        properties = {p["name"]: p["value"] for p in spawn["platform"]["properties"]}
        assert properties["container-image"].startswith("docker://")
    assert ws.digests(MLP) == digests  # same environment, other toolchain: the same bytes
