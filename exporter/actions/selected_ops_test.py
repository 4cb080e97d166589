"""Selected-operators files (docs/deployment.md) of the tiny programs that Bazel built: each
program's, as ExecuTorch's gen_oplist writes it, and the merge of several."""

import pytest
import yaml

from exporter.actions import selected_ops
from exporter.core import operators
from exporter.tests.built_programs import path, used_operators


@pytest.mark.parametrize("program", ["tiny_portable_pte", "tiny_xnnpack_pte"])
def test_selected_operators_are_the_programs(program):
    with open(path(program + ".selected_operators.yaml"), encoding="utf-8") as f:
        data = yaml.safe_load(f)
    assert {operators.kernel_name(op) for op in data["operators"]} == used_operators(program)
    assert all(op["debug_info"] == [f"//exporter/tests:{program}"] for op in data["operators"].values())
    assert set(data["et_kernel_metadata"]) == set(data["operators"])
    assert all(key.startswith("v1/") for keys in data["et_kernel_metadata"].values() for key in keys)


def test_merged_lists_hold_every_program():
    merged = selected_ops.merge([path(p + ".selected_operators.yaml") for p in ("tiny_portable_pte", "tiny_xnnpack_pte")])
    used = used_operators("tiny_portable_pte") | used_operators("tiny_xnnpack_pte")
    assert {operators.kernel_name(op) for op in merged["operators"]} == used
    shared = merged["operators"]["aten::add.out"]["debug_info"]
    assert shared == ["//exporter/tests:tiny_portable_pte", "//exporter/tests:tiny_xnnpack_pte"]
