"""numerics.run on real programs: it passes on the right model and catches wrong programs."""

import json
import os

import pytest
import torch

from exporter.checks import contract, differences, numerics
from exporter.tests.tiny_model import tiny

SPEC = {
    "dims": {"batch": {"min": 1, "max": 8, "example": 2}},
    "inputs": [
        {"name": "x", "value": {"tensor": {"shape": ["batch", 4], "dtype": "float32"}}},
        {"name": "y", "value": {"tensor": {"shape": ["batch"], "dtype": "int64"}}},
    ],
}


def _config(backend="portable", **changes):
    config = {
        "label": "//t:numerics", "program": f"//exporter/tests:tiny_{backend}_pte",
        "exported_label": "//exporter/tests:tiny_ep",
        "pte": f"exporter/tests/tiny_{backend}_pte.pte", "pt2": "exporter/tests/tiny_ep.pt2",
        "pt2_manifest": "exporter/tests/tiny_ep.pt2.json", "spec": SPEC, "method": "forward",
        "reference": "eager", "backends": [] if backend == "portable" else [backend],
        "model": {"label": "//exporter/tests:tiny_model", "entry": "exporter.tests.tiny_model:tiny",
                  "init_args": {}, "checkpoint": None, "import_roots": [os.path.abspath(".")]},
        "rtol": None, "atol": None, "inputs": [{"batch": 5}],
    }
    config.update(changes)
    return config


def _run(data):
    """numerics.run on the config the rule would write as data."""
    return numerics.run(contract.NumericsConfig.from_json(data))


@pytest.mark.parametrize("backend", ["portable", "xnnpack"])
def test_program_matches_its_eager_model_at_min_example_max_and_listed(backend):
    ok, report = _run(_config(backend))
    assert ok, report
    for case in ("min batch=1", "example batch=2", "max batch=8", "listed batch=5"):
        assert f"{case}: output 0 float32[" in report and f"{case}: output 1 int64[" in report
    rtol, atol = numerics.default_tolerances([] if backend == "portable" else [backend])
    assert f"(rtol {rtol:g}, atol {atol:g})" in report


def test_compared_with_the_exported_module_too():
    ok, report = _run(_config(reference="exported", model=None))
    assert ok, report
    assert "vs the exported program //exporter/tests:tiny_ep" in report


def test_a_model_with_other_weights_than_the_program_fails(tmp_path):
    model = tiny()
    with torch.no_grad():
        model.fc.weight.add_(0.05)  # a checkpoint that differs from what the .pte was built from
    checkpoint = tmp_path / "other.pt"
    torch.save(model.state_dict(), checkpoint)
    config = _config()
    config["model"]["checkpoint"] = str(checkpoint)
    ok, report = _run(config)
    assert not ok
    assert "output 0 float32[8, 3]" in report and "FAIL" in report
    assert "output 1 int64[8]: worst abs error 0, worst rel error 0  ok" in report
    assert "Past tolerance" in report


def test_sizes_the_program_was_not_planned_for_fail(tmp_path):
    # A manifest that claims batch up to 12: the .pte only planned memory for 8.
    manifest = tmp_path / "ep.pt2.json"
    manifest.write_text(json.dumps({"range_constraints": {"batch": {"min": 1, "max": 12}}}))
    ok, report = _run(_config(pt2_manifest=str(manifest), inputs=[]))
    assert not ok
    assert "max batch=12: FAIL, the runtime rejected the inputs" in report


def test_tight_tolerances_are_respected():
    ok, report = _run(_config("xnnpack", rtol=0.0, atol=0.0))
    # XNNPACK's float32 arithmetic is not bit-identical to ATen's; zero tolerance must fail.
    assert not ok, report


def test_cases_cover_min_example_max_then_listed_without_repeats():
    spec = {"dims": {"a": {"min": 1, "max": None, "example": 2}, "b": {"min": 3, "max": 9, "example": 3}}}
    ranges = {"a": {"min": 1, "max": None}, "b": {"min": 3, "max": 9}}
    cases = numerics.cases(spec, ranges, [{"a": 5}, {"b": 3}])
    assert cases == [
        ("min a=1, b=3", {"a": 1, "b": 3}),
        ("example a=2, b=3", {"a": 2, "b": 3}),
        ("max a=2, b=9", {"a": 2, "b": 9}),  # an open max stays at the example
        ("listed a=5, b=3", {"a": 5, "b": 3}),
    ]
    assert numerics.cases({"dims": {}}, {}, []) == [("static shapes", {})]


def test_inputs_follow_the_case_sizes_through_derived_dims_and_containers():
    spec = {
        "dims": {"seq": {"min": 1, "max": 9, "example": 2}},
        "inputs": [
            {"name": "x", "value": {"tensor": {"shape": ["2*seq+1", 3], "dtype": "float32",
                                               "example_shape": [5, 3]}}},
            {"name": "pair", "value": {"tuple": [{"tensor": {"shape": ["seq"], "dtype": "int64"}},
                                                  {"int": 3}]}},
        ],
    }
    values = numerics.make_inputs(spec, {"seq": 4})
    assert values["x"].shape == (9, 3)
    assert values["pair"][0].shape == (4,) and values["pair"][1] == 3
    again = numerics.make_inputs(spec, {"seq": 4})
    assert torch.equal(values["x"], again["x"])  # seeded


def test_compare_reports_nan_and_shape_mismatches():
    ok, report = numerics.compare(torch.tensor([1.0, float("nan")]), torch.tensor([1.0, 2.0]), 0.1, 0.1)
    assert not ok and "NaN" in report
    ok, report = numerics.compare(torch.zeros(2, 3), torch.zeros(3, 2), 0.1, 0.1)
    assert not ok and "float32[3, 2] expected, the runtime gave float32[2, 3]" in report
    assert numerics.compare(torch.tensor([float("nan")]), torch.tensor([float("nan")]), 0, 0)[0]


class _Nested(torch.nn.Module):
    def forward(self, x, ys, *, scale):
        return x - 2 * ys[0] + ys[1] * scale  # no two inputs can swap unnoticed


def test_nested_and_keyword_inputs_reach_the_runtime_in_the_programs_order(tmp_path):
    from exporter.actions import lower

    t = lambda shape: {"tensor": {"shape": shape, "dtype": "float32"}}  # noqa: E731
    spec = {"dims": {"batch": {"min": 1, "max": 6, "example": 2}},
            "inputs": [{"name": "x", "value": t(["batch", 3])},
                       {"name": "ys", "value": {"list": [t(["batch", 3]), t(["batch", 3])]}},
                       {"name": "scale", "value": t([3])}]}
    values = numerics.make_inputs(spec, {"batch": 2})
    batch = torch.export.Dim("batch", min=1, max=6)
    ep = torch.export.export(_Nested(), (values["x"], values["ys"]), {"scale": values["scale"]},
                             dynamic_shapes={"x": {0: batch}, "ys": [{0: batch}, {0: batch}], "scale": None})
    torch.export.save(ep, tmp_path / "n.pt2")
    (tmp_path / "n.pte").write_bytes(lower.lower(ep, [])[0].buffer)
    (tmp_path / "n.pt2.json").write_text(json.dumps({"range_constraints": {"batch": {"min": 1, "max": 6}}}))
    config = _config(pte=str(tmp_path / "n.pte"), pt2=str(tmp_path / "n.pt2"), pt2_manifest=str(tmp_path / "n.pt2.json"),
                     spec=spec, reference="exported", model=None, inputs=[])
    ok, report = _run(config)
    assert ok, report
    assert "max batch=6: output 0 float32[6, 3]" in report


def test_every_derived_size_reaches_its_min_and_max():
    """The tutorial's Named sizes plus dx+1: each case moves every size written with dx."""
    t = lambda shape: {"tensor": {"shape": shape, "dtype": "float32"}}  # noqa: E731
    spec = {"dims": {"dx": {"min": 4, "max": 256, "example": 4}, "dh": {"min": None, "max": 512, "example": 2}},
            "inputs": [{"name": "x", "value": t(["dx", 3])}, {"name": "y", "value": t(["2*dx", "dh"])},
                       {"name": "z", "value": t(["dx+1"])}]}
    ranges = {"dx": {"min": 4, "max": 256}, "dh": {"min": 0, "max": 512}}
    sizes = dict(numerics.cases(spec, ranges, []))
    shapes = {name: {k: tuple(v.shape) for k, v in numerics.make_inputs(spec, s).items()} for name, s in sizes.items()}
    assert shapes["min dh=0, dx=4"] == {"x": (4, 3), "y": (8, 0), "z": (5,)}
    assert shapes["max dh=512, dx=256"] == {"x": (256, 3), "y": (512, 512), "z": (257,)}


def _on_both_cpus(**changes):
    """A config that runs the tiny XNNPACK program in the native runner and its arm64 twin."""
    settings = {"runtimes": ["python", "native", "arm64"], "native_runner": "native/et_runner",
                "native_runner_label": "//native:et_runner", "arm64_runner": "native/arm64/et_runner_arm64"}
    return _config("xnnpack", **{**settings, **changes})


def test_arm64_runs_its_own_cases_under_qemu_and_is_set_beside_x86_64(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_UNDECLARED_OUTPUTS_DIR", str(tmp_path))
    ok, report = _run(_on_both_cpus(arm64_inputs=[{"batch": 1}, {"batch": 3}]))
    assert ok, report
    assert "in ExecuTorch's python, native and arm64 runtimes vs the eager model" in report
    # batch 3 is no case of the test but of its arm64 run: every runtime runs it.
    for case in ("min batch=1", "listed batch=3"):
        for runtime in ("", " [native]", " [arm64]"):
            assert f"  {case}{runtime}: output 0 float32[" in report, (case, runtime)
        assert f"  {case} [arm64 vs x86-64]: largest difference " in report
    assert "max batch=8 [native]: output 0" in report and "max batch=8 [arm64]" not in report
    with open(tmp_path / differences.SUMMARY_FILE, encoding="utf-8") as f:
        summary = json.load(f)
    largest = summary["largest_difference"]
    assert sorted(largest["arm64"]) == sorted(largest["arm64 vs native"]) == ["listed batch=3", "min batch=1"]
    assert len(largest["native"]) == len(largest["python"]) == 5
    assert all(0 <= v < 1e-3 for v in largest["arm64"].values()), largest
    assert summary["reference"] == "eager //exporter/tests:tiny_model" and summary["qemu_cpu"] == "max,sme=off"
    assert summary["arm64_seconds"] > 0


def test_an_arm64_runner_that_cannot_start_fails_the_test_in_its_line(tmp_path):
    runner = tmp_path / "launcher"
    runner.write_text("#!/bin/sh\necho 'some noise' >&2\necho 'rules_torch_export: //x:y is an aarch64 binary; "
                      "run: apt-get install qemu-user-static' >&2\nexit 1\n")
    runner.chmod(0o755)
    ok, report = _run(_on_both_cpus(arm64_runner=str(runner)))
    assert not ok
    assert ("  arm64 runtime (//native:et_runner for aarch64, under qemu): FAIL, rules_torch_export: //x:y is an "
            "aarch64 binary; run: apt-get install qemu-user-static") in report
    assert "max batch=8 [native]: output 0" in report and "[arm64 vs x86-64]" not in report


def test_a_runner_built_for_another_cpu_is_one_line_not_an_exec_format_error(tmp_path):
    runner = tmp_path / "et_runner"
    runner.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(57))  # no interpreter line, no x86-64 code
    runner.chmod(0o755)
    ok, report = _run(_config(runtimes=["python", "native"], native_runner=str(runner), native_runner_label="//native:et_runner"))
    assert not ok
    assert "is not a program for this machine's CPU (built with --platforms for another one?); run tests " \
           "without --platforms" in report


def test_a_backend_that_computes_in_bf16_here_is_judged_by_sqnr_unless_the_test_says(monkeypatch):
    """OpenVINO on a CPU with bf16 units (backend_hooks/checks/openvino_precision.py, which
    tests/backends:openvino_precision_test checks against OpenVINO itself): SQNR, not rtol/atol,
    and the report says why; a test's own tolerances still rule."""
    monkeypatch.setattr(numerics, "reduced_precision", lambda config: {"OpenVINO": "bf16"})
    ok, report = _run(_config("xnnpack"))
    assert ok, report
    assert f"(SQNR >= {contract.DEFAULT_REDUCED_PRECISION_SQNR_DB:g} dB, OpenVINO computes in bf16 on this CPU" in report
    assert "(rtol" not in report.splitlines()[0]
    ok, report = _run(_config("xnnpack", rtol=1e-3, atol=1e-4))
    assert ok and "(rtol 0.001, atol 0.0001)" in report, report
