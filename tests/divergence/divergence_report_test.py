"""The deliberately broken numerics case fails, and its report names where the .pte departs
from the eager model: the module whose custom op decomposes to the wrong function, and its ops.
Also the comparison's logic on values made up to show each kind of departure."""

import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch

from exporter.checks import divergence

CONFIG = "tests/divergence/broken_numerics_test.config.json"


@pytest.fixture(scope="module")
def broken_run():
    code = "import sys; from exporter.checks import numerics; sys.exit(numerics.main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, CONFIG], capture_output=True, text=True)


def test_broken_case_fails(broken_run):
    assert broken_run.returncode == 1, broken_run.stdout + broken_run.stderr
    assert "FAIL" in broken_run.stderr


def test_report_names_the_diverging_module_and_ops(broken_run):
    report = broken_run.stderr
    assert "Where the .pte departs" in report, report
    line = next(l for l in report.splitlines() if "first module" in l)
    assert "module act (Swish)" in line, line
    for op in ("aten.clamp.default", "aten.add.Tensor", "aten.div.Tensor"):
        assert op in line, line
    assert "the .pte follows the exported program there" in line
    assert "first operator the runtime computes otherwise" not in report  # the kernels are right


def _spec(index, op, module):
    return SimpleNamespace(output_index=index, op_target=op, node_name=op.split(".")[1],
                           module_path=module, module_class=module.title())


def test_a_kernel_departure_is_blamed_on_the_kernel():
    specs = [_spec(1, "aten.relu.default", "act"), _spec(2, "aten.linear.default", "head")]
    ones = torch.ones(3)
    aot = [ones, ones, ones * 2]
    runtime = [ones, ones + 0.5, ones * 3]  # relu's kernel is off, and so is what follows
    kernel, export = divergence.compare_case(specs, runtime, aot, {}, 1e-4, 1e-5)
    assert kernel[0].startswith("aten.relu.default (node relu) in act (Act)"), kernel
    assert kernel[1] == "1 later operators differ too, downstream of it"
    assert export == []


def test_an_export_departure_is_blamed_on_the_module():
    specs = [_spec(1, "aten.clamp.default", "act")]
    ones = torch.ones(3)
    kernel, export = divergence.compare_case(specs, [ones, ones], [ones, ones], {"act": ones * 0}, 1e-4, 1e-5)
    assert kernel == []
    assert export[0].startswith("module act (Act), whose operators are aten.clamp.default"), export
