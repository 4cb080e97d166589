"""Every torch._export.db example, declared as a shape spec, exports as torch exports it itself.

For each case the test converts its example_args / example_kwargs / dynamic_shapes into the
spec JSON that shape_spec writes, runs the exporter's export path in-process (entry names the
installed module), and compares with torch.export.export run directly on the case: the same
operators, and the same final range for every dim the case asks to be dynamic.
"""

import inspect
import json
import os

import pytest
import torch
from torch._export.db.case import SupportLevel
from torch._export.db.examples import all_examples
from torch.utils import _pytree as pytree
from torch.utils._sympy.value_ranges import bound_sympy

from exporter.core.manifest import operator_histogram
from exporter.core.errors import UserError
from exporter.core.ranges import bound as _bound
from exporter.tests.export_harness import config_for, dims_by_axis, run_export

CASES = all_examples()
DTYPE_NAMES = {
    torch.float32: "float32", torch.float64: "float64", torch.int64: "int64",
    torch.int32: "int32", torch.bool: "bool", torch.float16: "float16",
}


def to_node(value, shape_spec, dims):
    """A spec NODE for one example value; shape_spec is its dynamic_shapes entry (or None)."""
    if isinstance(value, torch.Tensor):
        shape = list(value.shape)
        hints: list[str | None] = ["STATIC"] * len(shape)
        axes = dict(enumerate(shape_spec)) if isinstance(shape_spec, (list, tuple)) else (shape_spec or {})
        for axis, d in axes.items():
            if d is None:
                continue
            if isinstance(d, torch.export.dynamic_shapes._DimHint):
                hints[axis] = d.type.name
                continue
            bounds = {"min": d.min, "max": None if d.max >= 2**62 else d.max}
            dims[d.__name__] = dict(bounds, example=shape[axis])
            shape[axis], hints[axis] = d.__name__, None
        fill = value.item() if value.dim() == 0 else None
        return {"tensor": {"shape": shape, "dtype": DTYPE_NAMES[value.dtype], "hints": hints, "fill": fill}}
    if isinstance(value, (list, tuple)):
        kind = "list" if isinstance(value, list) else "tuple"
        specs = shape_spec if shape_spec is not None else [None] * len(value)
        return {kind: [to_node(v, s, dims) for v, s in zip(value, specs)]}
    if isinstance(value, dict):
        specs = shape_spec if shape_spec is not None else {}
        return {"dict": [{"key": k, "value": to_node(v, specs.get(k), dims)} for k, v in value.items()]}
    if value is None:
        return {"none": None}
    kind = {bool: "bool", int: "int", float: "float", str: "str"}[type(value)]
    return {kind: value}


def spec_inputs(case):
    """(inputs dict for the spec, dims) from a case's example inputs and dynamic_shapes."""
    forward = case.model.forward
    params = inspect.signature(forward).parameters
    bound = inspect.signature(forward).bind(*case.example_args, **(case.example_kwargs or {})).arguments
    dynamic = case.dynamic_shapes or {}
    inputs, dims = {}, {}
    for name, value in bound.items():
        if params[name].kind is inspect.Parameter.VAR_KEYWORD:
            for key, item in value.items():
                inputs[key] = to_node(item, (dynamic.get(name) or {}).get(key), dims)
        else:
            inputs[name] = to_node(value, dynamic.get(name), dims)
    return inputs, dims


def _paths(value, path, out):
    """Maps id(tensor) -> the spec path (inputs["x"][0]...) of every tensor in value."""
    if isinstance(value, torch.Tensor):
        out[id(value)] = path
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _paths(v, f"{path}[{i}]", out)
    elif isinstance(value, dict):
        for k, v in value.items():
            _paths(v, f"{path}[{json.dumps(k)}]", out)
    return out


def direct_ranges(ep, case):
    """{(spec path, axis): (min, max)} for every symbolic input size of torch's own export."""
    kwargs = case.example_kwargs or {}
    bound = inspect.signature(case.model.forward).bind(*case.example_args, **kwargs).arguments
    paths = {}
    for name, value in bound.items():
        _paths(value, f"inputs[{json.dumps(name)}]", paths)
    user = set(ep.graph_signature.user_inputs)
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder" and n.name in user]
    ranges = {}
    for leaf, node in zip(pytree.tree_leaves((case.example_args, kwargs)), placeholders):
        for axis, size in enumerate(getattr(node.meta.get("val"), "shape", ())):
            if isinstance(size, torch.SymInt) and not size.node.expr.is_number:
                vr = bound_sympy(size.node.expr, ep.range_constraints)
                ranges[(paths[id(leaf)], axis)] = (_bound(vr.lower), _bound(vr.upper))
    return ranges


def graph_modules(ep):
    return [m for m in ep.graph_module.modules() if isinstance(m, torch.fx.GraphModule)]


@pytest.mark.parametrize("strict", [False, True], ids=["nonstrict", "strict"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_db_example_exports_like_torch(name, strict, tmp_path):
    case = CASES[name]
    inputs, dims = spec_inputs(case)
    entry = f"torch._export.db.examples.{name}:model"
    config = config_for(tmp_path, entry, inputs, dims, strict=strict)
    kwargs = case.example_kwargs or {}

    def export_directly():
        return torch.export.export(
            case.model, case.example_args, kwargs, dynamic_shapes=case.dynamic_shapes, strict=strict
        )

    if case.support_level is not SupportLevel.SUPPORTED:
        with pytest.raises(Exception):  # noqa: B017 (whatever torch raises: the point is that it fails)
            export_directly()
        with pytest.raises(UserError) as error:
            run_export(config)
        message = str(error.value)
        assert "\n" not in message and "//test:model" in message
        assert not os.path.exists(config["outputs"]["pt2"])
        return

    direct = export_directly()
    manifest = run_export(config)
    assert manifest["operators"] == operator_histogram(graph_modules(direct))

    # Every requested dynamic dim stays dynamic, with torch's own range for it.
    expected = direct_ranges(direct, case)
    ours = {key: (d["min"], d["max"]) for key, d in dims_by_axis(manifest).items() if "specialised" not in d}
    assert ours == expected
    assert manifest["specialised"] == []
    assert sorted(manifest["range_constraints"]) == sorted(dims)


def test_dynamic_cases_are_covered():
    """The db has cases with dynamic_shapes; the test above must see them (it is not vacuous)."""
    dynamic = [n for n, c in CASES.items() if c.dynamic_shapes and c.support_level is SupportLevel.SUPPORTED]
    assert len(dynamic) >= 2
    for name in dynamic:
        inputs, dims = spec_inputs(CASES[name])
        assert dims, name


def test_instance_entry_with_dims_records_ranges(tmp_path):
    """scalar_output asks for x's axis 1 to be dynamic; the manifest says so, by the dim's name."""
    inputs, dims = spec_inputs(CASES["scalar_output"])
    manifest = run_export(config_for(tmp_path, "torch._export.db.examples.scalar_output:model", inputs, dims))
    record = dims_by_axis(manifest)[('inputs["x"]', 1)]
    assert record["requested"] == "dim1_x" and record["expr"] == "dim1_x"
