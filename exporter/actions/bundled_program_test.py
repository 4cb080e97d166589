"""The BundledProgram action and bundled_program_test's runner, on the tiny programs: real
ExecuTorch bundling, the real runtime's bundled-program API, one-shot runs of the exporter."""

import json
import os
import pathlib
import subprocess
import sys

import pytest
import torch
from executorch.devtools.bundled_program.core import BundledProgram
from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
from runfiles import Runfiles

from exporter.actions import bundled_program, registry
from exporter.checks import bundled_cases, numerics
from exporter.driver import request
from exporter.core.errors import UserError
from exporter.checks.contract import BundledCasesConfig

MAIN = Runfiles.Create().Rlocation("rules_torch_export/exporter/main.py")
SPEC = {
    "dims": {"batch": {"min": 1, "max": 8, "example": 2}},
    "inputs": [
        {"name": "x", "value": {"tensor": {"shape": ["batch", 4], "dtype": "float32"}}},
        {"name": "y", "value": {"tensor": {"shape": ["batch"], "dtype": "int64"}}},
    ],
}
TINY_MODEL = {"label": "//exporter/tests:tiny_model", "entry": "exporter.tests.tiny_model:tiny",
              "init_args": {}, "checkpoint": None, "srcs": ["exporter/tests/tiny_model.py"],
              "import_roots": ["."]}


def _data(tmp_path, backend="portable", cases=({"batch": 1}, {"batch": 7}), **changes):
    identity = tmp_path / "identity.txt"
    identity.write_text("python 3.11.7\ntorch==2.13.0+cpu\nexecutorch==1.4.1\n")
    data = {
        "label": "//t:bundle", "identity": str(identity),
        "outputs": {"bpte": str(tmp_path / "t.bpte"), "manifest": str(tmp_path / "t.bpte.json"),
                    "log": str(tmp_path / "t.log")},
        "program_label": f"//exporter/tests:tiny_{backend}_pte",
        "pte": f"exporter/tests/tiny_{backend}_pte.pte",
        "pte_manifest": f"exporter/tests/tiny_{backend}_pte.pte.json",
        "methods": {"forward": {"exported_label": "//exporter/tests:tiny_ep", "pt2": "exporter/tests/tiny_ep.pt2",
                                "spec": SPEC, "cases": [dict(c) for c in cases]}},
        "reference": "eager",
        "model": TINY_MODEL,
    }
    data.update(changes)
    return data


def _check_config(tmp_path, backend="portable", **changes):
    return BundledCasesConfig.from_json(dict(
        {"label": "//t:bundle_test", "bundle": "//t:bundle", "bpte": str(tmp_path / "t.bpte"),
         "manifest": str(tmp_path / "t.bpte.json"), "backends": [] if backend == "portable" else [backend],
         "rtol": None, "atol": None}, **changes))


@pytest.mark.parametrize("backend", ["portable", "xnnpack"])
def test_bundle_verifies_in_the_runtime_and_lists_its_cases(tmp_path, backend):
    bundled_program.run(registry.BundledProgramConfig.from_json(_data(tmp_path, backend)))
    manifest = json.loads((tmp_path / "t.bpte.json").read_text())
    cases = manifest["methods"]["forward"]["cases"]
    assert [c["sizes"] for c in cases] == [{"batch": 1}, {"batch": 7}]
    assert cases[1]["inputs"] == ["float32[7, 4]", "int64[7]"]
    assert cases[1]["outputs"] == ["float32[7, 3]", "int64[7]"]
    assert manifest["program"]["sha256"] == json.load(open(f"exporter/tests/tiny_{backend}_pte.pte.json"))["pte"]["sha256"]
    with open(f"exporter/tests/tiny_{backend}_pte.pte", "rb") as f:
        assert f.read() in (tmp_path / "t.bpte").read_bytes()  # the program's bytes, unchanged
    ok, report = bundled_cases.run(_check_config(tmp_path, backend))
    assert ok, report
    assert "2 bundled cases" in report
    assert "forward case 1 (batch=7): inputs float32[7, 4], int64[7]" in report
    assert "forward case 1 (batch=7): output 1 int64[7]: worst abs error 0" in report


def test_bundled_cases_hold_the_eager_outputs(tmp_path):
    bundled_program.run(registry.BundledProgramConfig.from_json(_data(tmp_path)))
    cases = bundled_cases.read_cases((tmp_path / "t.bpte").read_bytes())
    (x, y), (out, plus_one) = cases["forward"][1]
    from exporter.tests.tiny_model import tiny

    with torch.no_grad():
        expected, expected_plus_one = tiny()(x, y)
        wide, _ = tiny().double()(x.double(), y)
    # Computed in float64 and rounded once (the same bits on every CPU), so within float32's
    # rounding of the float32 model's outputs.
    assert torch.equal(out, wide.float()) and torch.equal(plus_one, expected_plus_one)
    assert torch.allclose(out, expected, rtol=1e-6, atol=1e-6)
    assert x.shape == (7, 4) and torch.equal(x, numerics.make_inputs(SPEC, {"batch": 7})["x"])
    manifest = json.loads((tmp_path / "t.bpte.json").read_text())
    assert manifest["methods"]["forward"]["computed_in"] == "float64"


def test_a_reference_that_cannot_run_in_float64_computes_in_float32(tmp_path, monkeypatch, capsys):
    def refuse(*args, **kwargs):
        raise RuntimeError("expected scalar type Float but found Double")

    monkeypatch.setattr(bundled_program.float64_math, "call", refuse)
    bundled_program.run(registry.BundledProgramConfig.from_json(_data(tmp_path)))
    cases = bundled_cases.read_cases((tmp_path / "t.bpte").read_bytes())
    (x, y), (out, _) = cases["forward"][1]
    from exporter.tests.tiny_model import tiny

    with torch.no_grad():
        assert torch.equal(out, tiny()(x, y)[0])
    manifest = json.loads((tmp_path / "t.bpte.json").read_text())
    assert manifest["methods"]["forward"]["computed_in"] == "float32"
    assert "expected outputs computed in float32" in capsys.readouterr().out


def test_a_wrong_expected_output_fails_with_the_worst_error(tmp_path):
    config = registry.BundledProgramConfig.from_json(_data(tmp_path))
    suites, records = bundled_program.build_suites(config)
    suites[0].test_cases[1].expected_outputs[0] += 1.0  # what a device computing wrongly would see
    bpte = serialize_from_bundled_program_to_flatbuffer(BundledProgram(None, suites, pte_file_path=config.pte))
    (tmp_path / "t.bpte").write_bytes(bpte)
    (tmp_path / "t.bpte.json").write_text(json.dumps({"program": {"label": "//p"}, "methods": records}))
    ok, report = bundled_cases.run(_check_config(tmp_path))
    assert not ok
    assert "forward case 0 (batch=1): ok" in report
    assert "forward case 1 (batch=7): FAIL, the runtime's check failed" in report
    assert "forward case 1 (batch=7): output 0 float32[7, 3]: worst abs error 1," in report
    assert "set rtol/atol on //t:bundle_test" in report


def test_the_exported_reference_gives_the_same_cases(tmp_path):
    bundled_program.run(registry.BundledProgramConfig.from_json(_data(tmp_path, reference="exported", model=None)))
    manifest = json.loads((tmp_path / "t.bpte.json").read_text())
    assert manifest["methods"]["forward"]["reference"] == "the exported program //exporter/tests:tiny_ep"
    ok, report = bundled_cases.run(_check_config(tmp_path))
    assert ok, report


OTHER_MODELS = """
import torch

class OneOutput(torch.nn.Module):
    def forward(self, x, y):
        return x * 2

class Refuses(torch.nn.Module):
    def forward(self, x, y):
        raise ValueError("batch too small")
"""


@pytest.mark.parametrize("entry, message", [
    ("OneOutput", r"method 'forward' at batch=7: the eager model //zoo:other returns 1 tensors, the program 2; "
                  r"set reference = \"exported\""),
    ("Refuses", r"method 'forward' at batch=1: the eager model //zoo:other raised ValueError: batch too small; "
                r"fix the model, or choose inputs it accepts"),
])
def test_an_eager_model_that_disagrees_with_the_program_names_the_fix(tmp_path, entry, message):
    (tmp_path / "other_models.py").write_text(OTHER_MODELS)
    other = dict(TINY_MODEL, label="//zoo:other", entry=f"other_models:{entry}", import_roots=[str(tmp_path)])
    with pytest.raises(UserError, match=message):
        bundled_program.run(registry.BundledProgramConfig.from_json(_data(tmp_path, model=other, cases=[{"batch": 7}]
                                                                         if entry == "OneOutput" else [{"batch": 1}])))
    assert not os.path.exists(tmp_path / "t.bpte")


def test_unsupported_input_and_output_types_are_refused():
    config = registry.BundledProgramConfig.from_json(_data(pathlib.Path(os.environ["TEST_TMPDIR"])))
    with pytest.raises(UserError, match=r"method 'forward' of //exporter/tests:tiny_portable_pte takes a none as "
                                        r"input 1; ExecuTorch's BundledProgram holds only tensor, int, float and bool"):
        bundled_program._check_types(config, "forward", {"inputs": [{"type": "tensor"}, {"type": "none"}], "outputs": []})
    with pytest.raises(UserError, match=r"returns a int list as output 0; .* expects tensor outputs only"):
        bundled_program._check_types(config, "forward", {"inputs": [], "outputs": [{"type": "int list"}]})


def _run_one_shot(tmp_path, data, seed):
    """The action as Bazel runs it without a worker: main.py with a params file."""
    (tmp_path / "config.json").write_text(json.dumps(data))
    (tmp_path / "params").write_text(f"bundled_program\n{tmp_path / 'config.json'}\n")
    return subprocess.run([sys.executable, MAIN, f"@{tmp_path / 'params'}"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": seed}, timeout=600)


def test_a_one_shot_run_at_another_hash_seed_gives_the_in_process_bytes(tmp_path):
    runs = []
    for where in ("in-process", "one-shot"):
        folder = tmp_path / where
        folder.mkdir()
        data = _data(folder, backend="xnnpack")
        if where == "in-process":
            bundled_program.run(registry.BundledProgramConfig.from_json(data))
        else:  # a fresh process, as Bazel runs the action, with another hash seed than pytest's
            done = _run_one_shot(folder, data, "7" if os.environ.get("PYTHONHASHSEED") == "123" else "123")
            assert done.returncode == 0, done.stderr
        runs.append(((folder / "t.bpte").read_bytes(), json.loads((folder / "t.bpte.json").read_text())))
    assert runs[0][0] == runs[1][0]
    assert runs[0][1]["bpte"] == runs[1][1]["bpte"]


def test_a_program_that_differs_from_its_manifest_fails_in_one_line_and_writes_nothing(tmp_path):
    data = _data(tmp_path, pte="exporter/tests/tiny_xnnpack_pte.pte")  # the portable program's manifest
    (tmp_path / "config.json").write_text(json.dumps(data))
    code, text = request.run(["bundled_program", str(tmp_path / "config.json")])  # as the CLI runs it
    assert code == 1
    first = text.strip().splitlines()[0]
    assert first.startswith("ERROR: //t:bundle: tiny_xnnpack_pte.pte has sha256 ")
    assert first.endswith("rebuild //exporter/tests:tiny_portable_pte")
    assert not os.path.exists(tmp_path / "t.bpte") and not os.path.exists(tmp_path / "t.bpte.json")
