"""numerics_test and graph_snapshot_test read what their build actions computed (the values of
a numerics test, the text of a snapshot) and import neither torch nor ExecuTorch to pass; a test
whose values are wrong still fails with the usual lines, and only then imports torch, to explain
where the program departs."""

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from exporter.checks import contract
from exporter.formats import case_values, value_file

NUMERICS = "tests/test_cost/gru_numerics_test.config.json"
SNAPSHOT = "models/gru/gru_graph_test.config.json"
HEAVY = ("torch", "executorch", "sympy")

_CODE = """import sys
from exporter.checks import {module}
code = {module}.main([sys.argv[1]])
print("imported:", ",".join(sorted({{name.split(".")[0] for name in sys.modules}} & set({heavy!r}))))
sys.exit(code)
"""


def _main(module, config):
    """(exit code, stdout + stderr, the heavy packages it imported) of module.main([config]),
    run in a fresh process from the runfiles root, as the test's launcher runs it."""
    done = subprocess.run([sys.executable, "-c", _CODE.format(module=module, heavy=HEAVY), config],
                          capture_output=True, text=True)
    report, _, imported = done.stdout.rpartition("imported:")
    return done.returncode, done.stderr + report, [name for name in imported.strip().split(",") if name]


# Several failing configs in one process, each main's report caught where it writes it (stdout if
# ok, else stderr), with the heavy packages imported by then: a failing test's explanation imports
# torch and ExecuTorch, which the failing cases pay once, not once each.
_MANY = """import contextlib, io, json, sys
from exporter.checks import {module}
results = []
for config in sys.argv[1:]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = {module}.main([config])
    imported = sorted({{name.split(".")[0] for name in sys.modules}} & set({heavy!r}))
    results.append([code, err.getvalue() + out.getvalue(), imported])
print("results:", json.dumps(results))
"""


def _mains(module, configs):
    """[(exit code, its report, the heavy packages imported by then)] of module.main([config]) for
    each config in turn, in one fresh process from the runfiles root."""
    done = subprocess.run([sys.executable, "-c", _MANY.format(module=module, heavy=HEAVY), *configs],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return [tuple(result) for result in json.loads(done.stdout.rpartition("results:")[2])]


def test_a_numerics_test_passes_on_its_values_without_torch():
    code, report, heavy = _main("numerics", NUMERICS)
    assert code == 0, report
    assert heavy == [], report
    assert "vs the eager model //models/gru:gru" in report
    for case in ("min batch=1", "example batch=2", "max batch=8", "listed batch=5"):
        assert f"  {case}: output 0 float32[" in report and f"  {case} [native]: output 0 float32[" in report


def test_a_snapshot_test_passes_on_its_text_without_torch():
    code, report, heavy = _main("golden", SNAPSHOT)
    assert code == 0, report
    assert heavy == [], report
    assert "ok //models/gru:gru_graph_test: //models/gru:gru_ep matches models/gru/gru.graph.txt" in report


def _with_values(tmp_path, change):
    """The GRU test's config with its values changed by change(CaseValues), written to tmp_path."""
    with open(NUMERICS, encoding="utf-8") as f:
        data = json.load(f)
    values = case_values.read(data["values"], data["values_data"])
    change(values)
    paths = str(tmp_path / "v.json"), str(tmp_path / "v.etvals")
    case_values.write(values, *paths)
    data["values"], data["values_data"] = paths
    config = tmp_path / "config.json"
    config.write_text(json.dumps(data))
    return str(config)


def _shift(values):
    first = values.calls[0].python[0]
    values.calls[0].python[0] = value_file.Tensor(first.dtype, first.array + np.float32(0.5))


def _reject(values):
    values.calls[-1].python, values.calls[-1].python_error = None, "Error 0x12: sizes out of range"


@pytest.fixture(scope="module")
def failing(tmp_path_factory):
    """{"shift": .., "reject": ..}: _main's (exit code, report, heavy packages) of the GRU test
    with wrong Python outputs, then with a rejected call, run in that order in one process (the
    heavy packages are those imported by the end of each)."""
    folder = tmp_path_factory.mktemp("failing")
    os.makedirs(folder / "shift")
    os.makedirs(folder / "reject")
    configs = [_with_values(folder / "shift", _shift), _with_values(folder / "reject", _reject)]
    return dict(zip(("shift", "reject"), _mains("numerics", configs)))


def test_wrong_python_outputs_fail_with_the_usual_lines_and_an_explanation(failing):
    code, report, heavy = failing["shift"]
    assert code == 1, report
    assert "  min batch=1: output 0 float32[1, 4]: worst abs error 0.5, worst rel error" in report
    assert "FAIL" in report.split("min batch=1: output 0")[1].splitlines()[0]
    assert "example batch=2: output 0" in report and "[native]" in report  # the rest still ran
    assert "Past tolerance. If the difference is expected, set rtol/atol (or min_sqnr_db, " \
           "min_top1_agreement) on //tests/test_cost:gru_numerics_test" in report
    # The explanation ran (the GRU's graph is one ExecuTorch's tap cannot instrument).
    assert "tapped with ExecuTorch's devtools" in report or "(no per-operator report: tapping every" in report
    assert "torch" in heavy  # only a failing test pays for torch (the first config in its process)


def test_a_rejected_call_and_a_recorded_error_fail_as_before(tmp_path, failing):
    code, report, _ = failing["reject"]
    assert code == 1 and "  listed batch=5: FAIL, the runtime rejected the inputs: Error 0x12: sizes out of range" in report

    def broken(values):
        values.error = "case 'min batch=1' feeds an input that is also a batch of calibration_data //c:d"

    os.makedirs(tmp_path / "b")
    code, report, heavy = _main("numerics", _with_values(tmp_path / "b", broken))
    assert (code, report.splitlines()[0]) == (1, "//tests/test_cost:gru_numerics_test: case 'min batch=1' feeds an "
                                                 "input that is also a batch of calibration_data //c:d")
    assert heavy == []


def test_the_built_values_are_those_the_test_computed_in_process_before():
    config = contract.load(NUMERICS, contract.NumericsConfig)
    built = case_values.read(config.values, config.values_data)
    from exporter.actions import numerics_values

    here = numerics_values.compute(dataclasses.replace(config, values=None, values_data=None))
    assert (built.reference, built.inputs, built.arm64_cases) == (here.reference, here.inputs, here.arm64_cases)
    assert [c.name for c in built.calls] == [c.name for c in here.calls]
    for a, b in zip(built.calls, here.calls):
        assert [v.dtype for v in a.feed] == [v.dtype for v in b.feed]
        assert all(np.array_equal(x.array, y.array) for x, y in zip(a.feed, b.feed))  # seeded: bit for bit
        for x, y in zip(a.expected + a.python, b.expected + b.python):
            assert x.dtype == y.dtype and np.allclose(x.array, y.array, rtol=1e-5, atol=1e-6)
