"""Incremental rebuilds: change pruning and precise dependencies, read from execution logs.

One workspace is built once; each test then makes one edit, runs `bazel test //zoo:all`
(which builds every program and the bundle, and runs the test downstream of //zoo:mlp_pte),
and checks exactly which actions ran.
"""

import json
import os
import re
import signal
import subprocess
import time

import pytest

from tests.e2e import harness, zoo_workspace


# What `bazel query` says depends on the shared layers, asked before the first build: a query
# loads packages under other Starlark semantics than a build (.bazelrc gives `query` no
# --incompatible_disallow_empty_glob), so a query between two builds made the next build load
# and analyze everything again. No case edits a BUILD file before the one that reads these.
LAYER_DEPENDENTS = "rdeps(//zoo/..., //zoo/common:layers)"
_layer_dependents: dict[str, list[str]] = {}


@pytest.fixture(scope="module")
def ws():
    with harness.Workspace.create("incremental") as workspace:
        zoo_workspace.install(workspace)
        for kind in ("torch_export", "executorch_program"):
            _layer_dependents[kind] = _query(workspace, f"kind({kind}, {LAYER_DEPENDENTS})")
        first = workspace.bazel("test", "//zoo:all").check()
        assert first.labels("TorchExport") == zoo_workspace.EXPORTS  # a cold start runs all
        assert first.tests_run() == ["zoo/mlp_pte_test"]
        yield workspace


def _edit(ws, rel, old, new):
    text = ws.read(rel)
    assert old in text, f"{rel} no longer holds {old!r}; update the test"
    ws.write(rel, text.replace(old, new, 1))


def _rebuild(ws):
    return _rebuild_with(ws)


def _rebuild_with(ws, *flags):
    return ws.bazel("test", "//zoo:all", *flags).check()


def _query(ws, expression):
    return sorted(ws.bazel("query", expression, log=False).check().stdout.split())


def test_comment_and_local_rename_rerun_the_export_but_nothing_downstream(ws):
    pt2 = ws.sha256("bazel-bin/zoo/mlp_ep.pt2")
    _edit(
        ws,
        "zoo/mlp.py",
        "        hidden = torch.tanh(self.body(x)) * self.scale + self.shift\n"
        "        return self.head(hidden)",
        "        # The same computation, spelled differently: the program stays the same.\n"
        "        features = torch.tanh(self.body(x)) * self.scale + self.shift\n"
        "        return self.head(features)",
    )
    result = _rebuild(ws)
    assert result.labels("TorchExport") == ["//zoo:mlp_ep"]  # its inputs changed, so it ran
    assert ws.sha256("bazel-bin/zoo/mlp_ep.pt2") == pt2  # ...and gave the same program
    assert result.executed("ExecuTorchLower") == []  # so Bazel pruned everything below it
    assert result.executed("ModelBundle") == []
    assert result.tests_run() == []
    assert "zoo/mlp.py" in ws.read("bazel-bin/zoo/mlp_ep.pt2.json")  # the manifest has new digests


def test_editing_one_model_rebuilds_only_its_chain(ws):
    _edit(ws, "zoo/gate.py", "torch.nn.Linear(8, 2)", "torch.nn.Linear(8, 3)")
    result = _rebuild(ws)
    assert result.labels("TorchExport") == ["//zoo:gate_ep"]
    assert result.labels("ExecuTorchLower") == ["//zoo:gate_pte"]
    assert len(result.executed("ModelBundle")) == 1
    assert result.tests_run() == []  # the mlp's test does not depend on the gate


def test_editing_shared_layers_rebuilds_exactly_their_dependents(ws):
    exports, programs = _layer_dependents["torch_export"], _layer_dependents["executorch_program"]
    assert exports == ["//zoo:conv_ep", "//zoo:mlp_ep"]  # not the gate, which does not use them
    _edit(ws, "zoo/common/layers.py", "torch.nn.ReLU()", "torch.nn.Sigmoid()")
    result = _rebuild(ws)
    assert result.labels("TorchExport") == exports
    assert result.labels("ExecuTorchLower") == programs
    assert result.tests_run() == ["zoo/mlp_pte_test"]  # //zoo:mlp_pte changed, so its test ran


def test_changing_only_the_backend_relowers_without_reexporting(ws):
    _edit(
        ws,
        "zoo/BUILD",
        'name = "gate_pte",\n    backends = [],',
        'name = "gate_pte",\n    backends = ["xnnpack"],',
    )
    result = _rebuild(ws)
    assert result.executed("TorchExport") == []
    assert result.labels("ExecuTorchLower") == ["//zoo:gate_pte"]


def test_new_calibration_data_requantizes_and_relowers_without_reexporting(ws):
    _edit(ws, "zoo/calibration.py", "def signals(count=4, batch=4, seed=1):",
          "def signals(count=4, batch=4, seed=2):")
    result = _rebuild(ws)
    assert result.executed("TorchExport") == []
    assert result.labels("CalibrationData") == ["//zoo:signal_calibration"]
    assert result.labels("TorchQuantize") == ["//zoo:conv_q8_ep"]
    assert result.labels("ExecuTorchLower") == ["//zoo:conv_q8_pte"]


def test_a_comment_in_the_model_reexports_and_quantization_stops_there(ws):
    pt2 = ws.sha256("bazel-bin/zoo/conv_ep.pt2")
    _edit(ws, "zoo/conv.py", "    def forward(self, x):\n",
          "    def forward(self, x):\n        # Pool over time, then classify.\n")
    result = _rebuild(ws)
    assert result.labels("TorchExport") == ["//zoo:conv_ep"]
    assert ws.sha256("bazel-bin/zoo/conv_ep.pt2") == pt2  # the same program...
    assert result.executed("TorchQuantize") == []  # ...so nothing below it ran
    assert result.executed("ExecuTorchLower") == []


def test_new_code_with_the_same_weights_keeps_the_ptd(ws):
    ptd, pte = ws.sha256("bazel-bin/zoo/mlp_external_pte.ptd"), ws.sha256("bazel-bin/zoo/mlp_external_pte.pte")
    _edit(ws, "zoo/mlp.py", "* self.scale + self.shift", "* self.scale - self.shift")
    result = _rebuild(ws)
    assert "//zoo:mlp_external_pte" in result.labels("ExecuTorchLower")  # the program changed...
    assert ws.sha256("bazel-bin/zoo/mlp_external_pte.pte") != pte
    assert ws.sha256("bazel-bin/zoo/mlp_external_pte.ptd") == ptd  # ...its weights did not


LORA_BUILD = """
load("//rules:defs.bzl", "executorch_program", "foundation_weights", "lora_model", "torch_export")

foundation_weights(
    name = "foundation",
    program = "//zoo:mlp_external_pte",
)
"""

ADAPTER = """
lora_model(
    name = "{name}",
    alpha = 4,
    base = "//zoo:mlp",
    checkpoint = "{name}.safetensors",
    rank = 2,
    target_modules = ["body"],
)

torch_export(
    name = "{name}_ep",
    model = ":{name}",
    shapes = "//zoo:vec",
)

executorch_program(
    name = "{name}_pte",
    backends = ["xnnpack"],
    exported = ":{name}_ep",
    foundation = ":foundation",
)
"""


def _add_adapter(ws, name, seed):
    """Appends a LoRA adapter of the mlp (its factors, then its program) to //zoo_lora.

    The factors are float32 safetensors written with numpy: this process never imports torch
    (about 3.5 s of CPU), which only the inner builds need."""
    import numpy
    from safetensors.numpy import save_file

    generator = numpy.random.default_rng(seed)
    factors = {"body.lora_a.weight": generator.standard_normal((2, 8), dtype=numpy.float32),
               "body.lora_b.weight": generator.standard_normal((16, 2), dtype=numpy.float32)}
    save_file(factors, os.path.join(ws.path, "zoo_lora", f"{name}.safetensors"))
    ws.write("zoo_lora/BUILD", ws.read("zoo_lora/BUILD") + ADAPTER.format(name=name))


def test_adding_an_adapter_rebuilds_nothing_else(ws):
    """A foundation's .ptd and index depend on its program alone: a new program that shares
    them runs its own export and lowering, and nothing else runs or changes."""
    ws.write("zoo_lora/BUILD", LORA_BUILD)
    _add_adapter(ws, "first", 1)
    ws.build("//zoo_lora:all")
    kept = ["bazel-bin/zoo/mlp_external_pte.ptd", "bazel-bin/zoo_lora/foundation.foundation.json",
            "bazel-bin/zoo_lora/first_pte.pte"]
    before = ws.digests(kept)
    _add_adapter(ws, "second", 2)
    result = ws.build("//zoo_lora:all")
    assert result.labels("TorchExport") == ["//zoo_lora:second_ep"]
    assert result.labels("ExecuTorchLower") == ["//zoo_lora:second_pte"]
    assert result.executed("FoundationWeights") == []
    assert ws.digests(kept) == before
    assert ws.sha256("bazel-bin/zoo_lora/second_pte.pte") != before["bazel-bin/zoo_lora/first_pte.pte"]


def _exporter_actions(result):
    """{mnemonic: how many ran} of the exporter's actions (the registry's mnemonics)."""
    from exporter.actions import registry

    mnemonics = sorted({a.mnemonic for a in registry.ACTIONS.values()})
    return {m: len(result.executed(m)) for m in mnemonics if result.executed(m)}


def test_a_new_deadline_reruns_no_exporter_action(ws):
    """A deadline changes no byte. Measured before: the same build of //models/mobilenet:mobilenet_pte
    with --//rules:exporter_deadline=7000 re-ran 3 exporter actions (the deadline was in each
    one's params file, so builds with other deadlines shared no cache)."""
    for flags in (["--//rules:exporter_deadline=7000"], []):
        result = _rebuild_with(ws, *flags)
        assert _exporter_actions(result) == {}, flags
        assert result.warm_ups() == [] and result.tests_run() == []
        assert [s["mnemonic"] for s in result.spawns if s["mnemonic"] == "ExporterDeadline"] == ["ExporterDeadline"]


def test_editing_a_report_s_code_redraws_reports_only(ws):
    """Reports are a tool set of their own (//exporter:report_srcs). Measured before: a comment
    appended to the seven report and dashboard modules re-ran the export and both lowerings of
    //models/mobilenet:mobilenet_pte, built without reports."""
    with_report = ["--output_groups=+report", "//zoo:mlp_pte"]
    ws.build(*with_report)
    _edit(ws, "exporter/reports/report_html.py", ":root{", "/* edited */ :root{")
    assert _exporter_actions(ws.build(*with_report)) == {"ProgramReport": 1}
    assert _exporter_actions(_rebuild(ws)) == {}


def _exporter_workers(ws, command):
    """Pids of this workspace's persistent workers for `command` (export or lower): not the
    processes a worker forks for a request, which share its command line."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            cwd = os.readlink(f"/proc/{pid}/cwd")
            parent = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()[1]
            forked = open(f"/proc/{parent}/cmdline", "rb").read().split(b"\0") == argv
        except OSError:
            continue  # gone, or not ours to read
        if b"--persistent_worker" in argv and f"--warm={command}".encode() in argv and cwd == ws.execroot \
                and not forked:
            pids.append(int(pid))
    return pids


def _children_named(command):
    """Pids of the processes whose command line is command."""
    found = subprocess.run(["pgrep", "-f", f"^{command}$"], capture_output=True, text=True).stdout
    return [int(p) for p in found.split()]


def _children(pid):
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in found.split()]


SLOW_BUILD = """
load("//rules:defs.bzl", "torch_export", "torch_model")

torch_model(
    name = "slowpoke",
    srcs = ["slowpoke.py"],
    entry = "zoo_slow.slowpoke:Slowpoke",
)

torch_export(
    name = "ep",
    model = ":slowpoke",
    shapes = "//zoo:vec",
)
"""

# Without the marker (the interrupted build's request), it says that it runs by starting a
# `sleep 4545` (model code may write nowhere but its outputs), runs long, then fails; with it
# (the test makes it before the next build), it does not.
SLOW_MODEL = """import os
import subprocess
import time

import torch

MARKER = {marker!r}
if not os.path.exists(MARKER):
    subprocess.Popen(["sleep", "4545"])
    time.sleep(45)
    raise RuntimeError("the interrupted build's request fails late")


class Slowpoke(torch.nn.Module):
    def forward(self, x):
        return x * 2{comment}
"""


def test_an_interrupted_build_leaves_nothing_that_harms_the_next_one(ws, tmp_path):
    """Ctrl-C leaves the worker's child running (Bazel 4.2.3 cannot cancel a request), and the
    next build runs the same action at once. The old request must neither write into the new
    outputs nor remove them when it fails."""
    marker = str(tmp_path / "first-run")
    open(marker, "w").close()
    ws.write("zoo_slow/BUILD", SLOW_BUILD)
    ws.write("zoo_slow/slowpoke.py", SLOW_MODEL.format(marker=marker, comment=""))
    ws.build("//zoo_slow:ep")
    reference = ws.sha256("bazel-bin/zoo_slow/ep.pt2")
    os.remove(marker)
    ws.write("zoo_slow/slowpoke.py", SLOW_MODEL.format(marker=marker, comment="  # runs again"))
    build = ws.popen("build", "//zoo_slow:ep")
    deadline = time.monotonic() + 300
    while not _children_named("sleep 4545"):
        assert build.poll() is None and time.monotonic() < deadline, "the export never started"
        time.sleep(0.2)
    (old_child,) = [c for pid in _exporter_workers(ws, "export") for c in _children(pid)]
    build.send_signal(signal.SIGINT)  # Ctrl-C
    build.communicate(timeout=120)
    assert os.path.exists(f"/proc/{old_child}"), "Bazel stopped the old request itself"
    open(marker, "w").close()  # the next build's request runs normally
    assert ws.build("//zoo_slow:ep").labels("TorchExport") == ["//zoo_slow:ep"]  # at once
    pt2 = os.path.join(ws.path, "bazel-bin/zoo_slow/ep.pt2")
    assert ws.sha256("bazel-bin/zoo_slow/ep.pt2") == reference
    written = os.stat(pt2)
    while os.path.exists(f"/proc/{old_child}") and time.monotonic() < deadline:
        time.sleep(0.5)  # until the old request has ended (today: stopped by the new one)
    time.sleep(1)
    assert os.path.exists(pt2), "the old request's clean-up removed the new output"
    assert (os.stat(pt2).st_ino, os.stat(pt2).st_mtime_ns) == (written.st_ino, written.st_mtime_ns)
    assert ws.build("//zoo_slow:ep").executed("TorchExport") == []


def test_a_worker_killed_mid_build_fails_that_build_and_the_next_one_succeeds(ws):
    """Runs next to last: it kills the workspace's export worker while a request runs in its child."""
    _edit(ws, "zoo/gate.py", "import torch\n", "import time\n\nimport torch\n\ntime.sleep(15)\n")
    build = ws.popen("build", "//zoo:gate_pte")
    deadline = time.monotonic() + 300
    while True:
        busy = [pid for pid in _exporter_workers(ws, "export") if _children(pid)]
        if busy:
            break
        assert build.poll() is None and time.monotonic() < deadline, "no worker child ever ran"
        time.sleep(0.2)
    os.kill(busy[0], signal.SIGKILL)
    _, stderr = build.communicate(timeout=300)
    assert build.returncode != 0, "the build whose worker was killed reported success"
    assert "//zoo:gate_ep" in stderr or "TorchExport" in stderr, stderr[-2000:]
    retry = ws.build("//zoo:gate_pte")  # the retry starts a fresh worker
    assert retry.labels("TorchExport") == ["//zoo:gate_ep"]
    assert {s["runner"] for s in retry.executed("TorchExport")} == {"worker"}
    assert os.path.exists(os.path.join(ws.path, "bazel-bin/zoo/gate_pte.pte"))


# The toy backend: one record and one hooks module, as a team adds a backend (CONTRIBUTING.md,
# "Adding a backend"), and the targets that show where it must appear.
TOY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "toy_backend")


def _toy_file(name):
    with open(os.path.join(TOY, name), encoding="utf-8") as f:
        return f.read()


def _add_the_toy_backend(ws):
    """The record, last in the records' tuple; the hooks module, beside the others; then the facts."""
    _edit(ws, "exporter/core/backends.py", "\n)\n\nBY_NAME = ", "\n" + _toy_file("record.txt") + ")\n\nBY_NAME = ")
    ws.write("backend_hooks/toy.py", _toy_file("toy.py"))
    ws.bazel("run", "//exporter:update_exporter_facts", log=False).check()
    ws.write("toy/BUILD", _toy_file("BUILD.toy"))


def _analysis_error(ws, target):
    result = ws.bazel("build", "--nobuild", target)
    assert result.code != 0, f"{target} passed analysis"
    return result.stderr


def test_a_backend_of_one_record_and_one_hooks_module_appears_everywhere(ws):
    """Runs last: it changes the toolchain's sources. The toy backend's delegate shows in the
    manifest, pte_inspect, the report (in its record's colour) and a budget; a numerics_test of it
    and an unknown backend fail at analysis, each naming it."""
    _add_the_toy_backend(ws)
    ws.build("//toy:mlp_toy", "//toy:mlp_toy_report")
    manifest = json.loads(ws.read("bazel-bin/toy/mlp_toy.pte.json"))
    assert manifest["backends"] == ["toy"]
    assert list(manifest["methods"]["forward"]["delegates"]) == ["ToyBackend"]
    assert list(manifest["backend_packages"]["toy"]["packages"]) == ["numpy"]
    inspected = ws.bazel("run", "//toy:mlp_toy.inspect", log=False).check().stdout
    assert "delegates by backend: ToyBackend\n" in inspected
    report = ws.read("bazel-bin/toy/mlp_toy.report.html")
    assert re.search(r'<i style="background:#a16207"></i>ToyBackend: \d+ of \d+ operators', report)
    budget = ws.bazel("test", "//toy:mlp_toy_budget_test", "--test_output=all").check()
    assert re.search(r"^  delegates toy +\d", budget.stdout, re.M), budget.stdout[-3000:]
    assert ("a toy program runs on a toy board only, and no runtime of this machine can run it; remove this "
            "numerics_test and test the program on the toy board") in _analysis_error(ws, "//toy:mlp_toy_numerics_test")
    assert ('use one of ["xnnpack", "openvino", "coreml", "tosa", "ethos_u", "toy"]'
            in _analysis_error(ws, "//toy:mlp_vulkan"))
