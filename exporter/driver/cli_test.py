"""The exporter's command line, run as Bazel runs it: one clear line per failure, no outputs."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from runfiles import Runfiles

MAIN = Runfiles.Create().Rlocation("rules_torch_export/exporter/main.py")

SPEC = {
    "inputs": [{"name": "x", "value": {"tensor": {"shape": ["batch", 4], "dtype": "float32"}}}],
    "dims": {"batch": {"min": 1, "max": 8, "example": 2}},
}

MODELS = textwrap.dedent(
    """
    import torch

    class Tiny(torch.nn.Module):
        def __init__(self, width=4):
            super().__init__()
            self.linear = torch.nn.Linear(4, width)

        def forward(self, x):
            return torch.relu(self.linear(x))

    class DataDependent(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:  # a branch on data: torch.export cannot trace it
                return x + 1
            return x - 1

    def not_a_module():
        return 42
    """
)


def _write_zoo(folder):
    (folder / "zoo").mkdir()
    (folder / "zoo" / "__init__.py").write_text("")
    (folder / "zoo" / "models.py").write_text(MODELS)
    (folder / "identity.txt").write_text("python 3.11.7\ntorch==2.13.0+cpu\n")


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    _write_zoo(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_exporter(command, config):
    """Writes the config and a params file as the rules do; returns the finished process."""
    config = {"label": "//zoo:target", "identity": "identity.txt", **config}
    with open(f"{command}.config.json", "w") as f:
        json.dump(config, f)
    with open(f"{command}.params", "w") as f:
        f.write(f"{command}\n{command}.config.json\n")
    return subprocess.run(
        [sys.executable, MAIN, f"@{command}.params"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        timeout=600,
    )


def export_config(entry, outputs=("out.pt2", "out.pt2.json", "out.export.log")):
    return {
        "model": {
            "label": "//zoo:model",
            "entry": entry,
            "init_args": {},
            "srcs": ["zoo/__init__.py", "zoo/models.py"],
            "import_roots": ["."],
        },
        "spec_label": "//zoo:spec",
        "spec": SPEC,
        "outputs": {"pt2": outputs[0], "manifest": outputs[1], "log": outputs[2]},
    }


def assert_one_error_line(proc, *needles):
    assert proc.returncode == 1, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1, proc.stderr
    assert errors[0].startswith("ERROR: //zoo:target: "), errors[0]
    for needle in needles:
        assert needle in errors[0], errors[0]
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def assert_no_outputs(workdir):
    """Only the log survives a failure: Bazel keeps a failed action's outputs, so no half-written
    program may exist."""
    leftovers = sorted(p.name for p in workdir.iterdir() if p.name.startswith("out."))
    assert leftovers == ["out.export.log"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """(the finished process, its folder) of one export of zoo.models:Tiny, which the tests of a
    successful export and of a lowering of its .pt2 share."""
    folder = tmp_path_factory.mktemp("exported")
    _write_zoo(folder)
    old = os.getcwd()
    os.chdir(folder)
    try:
        return run_exporter("export", export_config("zoo.models:Tiny")), folder
    finally:
        os.chdir(old)


def test_export_success_is_silent_and_writes_both_outputs(exported):
    proc, workdir = exported
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "" and proc.stdout == ""
    assert (workdir / "out.export.log").exists()
    manifest = json.loads((workdir / "out.pt2.json").read_text())
    assert manifest["range_constraints"] == {"batch": {"min": 1, "max": 8}}
    assert manifest["operators"]["aten.linear.default"] == 1
    assert manifest["pt2"]["size"] == (workdir / "out.pt2").stat().st_size


def test_missing_module_names_srcs(workdir):
    proc = run_exporter("export", export_config("zoo.missing:Tiny"))
    assert_one_error_line(proc, "//zoo:model", "zoo.missing", "srcs")
    assert_no_outputs(workdir)


def test_missing_callable_lists_the_module_callables(workdir):
    proc = run_exporter("export", export_config("zoo.models:Tny"))
    assert_one_error_line(proc, "'Tny'", "Tiny", "entry")
    assert_no_outputs(workdir)


def test_callable_that_returns_no_module(workdir):
    proc = run_exporter("export", export_config("zoo.models:not_a_module"))
    assert_one_error_line(proc, "nn.Module", "entry")
    assert_no_outputs(workdir)


def test_failing_export_names_the_model_and_spec(workdir):
    proc = run_exporter("export", export_config("zoo.models:DataDependent"))
    assert_one_error_line(proc, "//zoo:model", "//zoo:spec")
    assert_no_outputs(workdir)
    log_path = proc.stderr.split("(full output: ")[1].split(")")[0]
    assert log_path == "out.export.log"
    assert "Traceback" in (workdir / log_path).read_text()


def test_lower_with_unknown_backend_fails_cleanly(workdir, exported):
    assert exported[0].returncode == 0
    for name in ("out.pt2", "out.pt2.json"):
        shutil.copy(exported[1] / name, workdir / name)
    proc = run_exporter(
        "lower",
        {
            "exported_label": "//zoo:exported",
            "pt2": "out.pt2",
            "backends": ["vulkan"],
            "outputs": {"pte": "out.pte", "manifest": "out.pte.json"},
        },
    )
    assert_one_error_line(proc, "vulkan", "backends")
    assert not (workdir / "out.pte").exists()


def test_a_hand_made_run_keeps_its_log_in_a_folder_of_its_own(workdir, tmp_path):
    """A config without a declared log (a hand-made run). Before: the log went to the fixed, shared
    $TMPDIR/rules_torch_export-logs/<target>.log, opened in a way that follows a symlink there."""
    temp, victim = tmp_path / "tmp", tmp_path / "victim.txt"
    (temp / "rules_torch_export-logs").mkdir(parents=True)
    victim.write_text("untouched\n")
    (temp / "rules_torch_export-logs" / "zoo_target.log").symlink_to(victim)
    config = export_config("zoo.models:DataDependent")
    del config["outputs"]["log"]
    (workdir / "hand.json").write_text(json.dumps({"label": "//zoo:target", "identity": "identity.txt", **config}))
    proc = subprocess.run([sys.executable, MAIN, "export", "hand.json"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0", "TMPDIR": str(temp)}, timeout=600)
    assert_one_error_line(proc, "//zoo:spec")
    log = proc.stderr.split("(full output: ")[1].split(")")[0]
    folder = os.path.dirname(log)
    assert os.path.dirname(folder) == str(temp) and os.path.basename(folder).startswith("rules_torch_export-logs-")
    assert os.stat(folder).st_mode & 0o777 == 0o700 and "Traceback" in open(log).read()
    assert victim.read_text() == "untouched\n"
