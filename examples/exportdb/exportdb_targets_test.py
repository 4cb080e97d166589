"""The exportdb targets export with the dynamism their cases ask for, and nothing more."""

import json
import os

import pytest


def manifest(case):
    root = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"])
    with open(os.path.join(root, "examples", "exportdb", case + "_ep.pt2.json"), encoding="utf-8") as f:
        return json.load(f)


def test_cond_operands_keeps_dim0_x_dynamic():
    m = manifest("cond_operands")
    assert m["range_constraints"] == {"dim0_x": {"min": 0, "max": None}}
    assert [(d["input"], d["axis"], d["expr"]) for d in m["dims"]] == [('inputs["x"]', 0, "dim0_x")]
    assert m["operators"]["torch.ops.higher_order.cond"] == 1


def test_scalar_output_keeps_dim1_x_dynamic():
    m = manifest("scalar_output")
    assert [(d["input"], d["axis"], d["expr"]) for d in m["dims"]] == [('inputs["x"]', 1, "dim1_x")]
    assert m["output_specs"][0]["kind"] == "USER_OUTPUT"


@pytest.mark.parametrize("case, inputs", [
    ("fn_with_kwargs", 8),  # pos0, 2 in tuple0, 2 in *myargs, mykw0, 2 in **mykwargs
    ("pytree_flatten", 2),
    ("tensor_setattr", 2),  # the str is an input too, a constant
    ("constrain_as_size_example", 1),
    ("list_unpack", 3),
])
def test_static_cases_have_every_input_and_no_dims(case, inputs):
    m = manifest(case)
    assert m["dims"] == [] and m["range_constraints"] == {}
    assert len([s for s in m["input_specs"] if s["kind"] == "USER_INPUT"]) == inputs
    assert m["model"]["entry"] == f"torch._export.db.examples.{case}:model"
