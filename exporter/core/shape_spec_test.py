"""exporter.core.shape_spec: size expressions, input building, and real exports of every input kind."""

import pytest
import torch

from exporter.core import shape_spec
from exporter.core.errors import UserError
from exporter.tests.export_harness import config_for, dims_by_axis, load_pt2, run_export, tensor

ENTRY = "exporter.tests.spec_models:"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("dx", ("dx", 1, 0)),
        ("2*dx", ("dx", 2, 0)),
        ("dx*2", ("dx", 2, 0)),
        ("dx+1", ("dx", 1, 1)),
        ("4*dx-2", ("dx", 4, -2)),
        (" 2 * dx + 3 ", ("dx", 2, 3)),
        ("2*(dx+1)", ("dx", 2, 2)),
        ("dx + dx", ("dx", 2, 0)),
    ],
)
def test_parse_size_accepts_linear_expressions(text, expected):
    assert tuple(shape_spec.parse_size(text, {"dx": {}, "dy": {}})) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("dx*dx", "non-linear"),
        ("dx**2", "non-linear"),
        ("dx+dy", "several dims"),
        ("dx/2", "linear expression"),
        ("-dx+8", "needs a positive int coefficient"),
        ("3", "has no dim name"),
        ("batch", "does not declare"),
        ("sin(dx)", "not linear"),
        ("dx; import os", "linear expression"),
        ("dx+", "not a valid expression"),
    ],
)
def test_parse_size_rejects_the_rest(text, message):
    with pytest.raises(ValueError, match=message):
        shape_spec.parse_size(text, {"dx": {}, "dy": {}})


def test_parse_size_keeps_ints_and_sympy_names_as_dims():
    assert shape_spec.parse_size(7, {}) == 7
    # N, S and E are sympy functions or constants; as dim names they are plain symbols.
    assert tuple(shape_spec.parse_size("2*N+1", {"N": {}})) == ("N", 2, 1)
    assert shape_spec.size_of("4*E-2", {"E": 3}) == 10


def test_format_linear_round_trips():
    for text in ("dx", "2*dx", "dx+1", "4*dx-2"):
        assert shape_spec.format_linear(shape_spec.parse_size(text, {"dx": {}})) == text


def test_example_tensor_fill_dtype_and_seed():
    g = torch.Generator().manual_seed(0)
    assert shape_spec.example_tensor([], "int64", g, fill=4).item() == 4
    assert shape_spec.example_tensor([2], "bool", g, fill=True).all()
    a = shape_spec.example_tensor([3], "float32", torch.Generator().manual_seed(0))
    b = shape_spec.example_tensor([3], "float32", torch.Generator().manual_seed(0))
    assert torch.equal(a, b)
    assert shape_spec.example_tensor([3], "uint8", g).dtype == torch.uint8


def _spec(inputs, dims=None):
    return {"dims": dims or {}, "inputs": [{"name": k, "value": v} for k, v in inputs.items()]}


def test_the_exporter_reads_a_spec_as_large_as_analysis_accepts():
    # The analysis-time walks stop at MAX_VALUES steps (exporter_facts.bzl's MAX_SPEC_VALUES), so
    # a spec holds at most MAX_VALUES - 1 values (here one input: a list node and its items).
    count = shape_spec.MAX_VALUES - 1
    items = [{"int": i} for i in range(count - 2)] + [{"tensor": {"shape": [2], "dtype": "float32", "hint": None, "fill": None}}]
    big: dict = {"dims": {}, "hint": None, "inputs": [{"name": "xs", "value": {"list": items}}]}
    assert 1 + len(items) == count
    tensors = {}
    value = shape_spec.build_value(big["inputs"][0]["value"], big, torch.Generator().manual_seed(0), "inputs[\"xs\"]", tensors)
    assert len(value) == len(items) and value[:3] == [0, 1, 2] and tuple(value[-1].shape) == (2,)
    assert [path for path, _ in shape_spec.walk_tensors(big)] == [f'inputs["xs"][{len(items) - 1}]']


def test_build_inputs_orders_positional_and_keyword_inputs():
    class M(torch.nn.Module):
        def forward(self, a, b=None, *, c):
            return a

    spec = _spec({"c": tensor([2]), "a": tensor(["n"]), "b": {"int": 3}}, {"n": {"min": 2, "max": 8, "example": 5}})
    built = shape_spec.build_inputs(spec, M().forward, "//t:s")
    assert [tuple(v.shape) if isinstance(v, torch.Tensor) else v for v in built.args] == [(5,), 3]
    assert list(built.kwargs) == ["c"]
    assert built.dynamic_shapes["a"][0].__name__ == "n"
    assert built.dynamic_shapes["b"] is None and built.dynamic_shapes["c"] is None


def test_build_inputs_derived_dims_and_hints():
    class M(torch.nn.Module):
        def forward(self, x, y):
            return x

    spec = _spec(
        {"x": tensor(["n", 6], hints=[None, "DYNAMIC"]), "y": tensor(["2*n+1", 3, 4], hints=[None, "AUTO", "STATIC"])},
        {"n": {"min": 2, "max": 8, "example": 3}},
    )
    built = shape_spec.build_inputs(spec, M().forward, "//t:s")
    assert tuple(built.args[1].shape) == (7, 3, 4)
    assert built.dynamic_shapes["x"][1] is torch.export.Dim.DYNAMIC
    assert str(built.dynamic_shapes["y"][0]) == "2*n + 1"
    assert built.dynamic_shapes["y"][1] is torch.export.Dim.AUTO and 2 not in built.dynamic_shapes["y"]


def test_build_inputs_without_dynamic_sizes_passes_none():
    class M(torch.nn.Module):
        def forward(self, x):
            return x

    assert shape_spec.build_inputs(_spec({"x": tensor([2, 3])}), M().forward, "//t:s").dynamic_shapes is None


@pytest.mark.parametrize(
    "inputs, message",
    [
        ({"x": tensor([2]), "z": tensor([2])}, 'names input "z", but forward takes (x, y)'),
        ({"x": tensor([2])}, 'forward needs input "y"'),
    ],
)
def test_build_inputs_name_mismatches(inputs, message):
    class M(torch.nn.Module):
        def forward(self, x, y):
            return x

    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        shape_spec.build_inputs(_spec(inputs), M().forward, "//t:s")


def test_nested_inputs_export_with_a_shared_dim(tmp_path):
    dims = {"n": {"min": 2, "max": 32, "example": 4}}
    inputs = {
        "xs": {"list": [tensor(["n", 1]), tensor(["n", 5])]},
        "table": {"dict": [{"key": "w", "value": tensor(["n", 1])}, {"key": 3, "value": tensor([1])}]},
        "pair": {"tuple": [tensor(["n", 1]), tensor(["n", 1])]},
    }
    m = run_export(config_for(tmp_path, ENTRY + "Nested", inputs, dims))
    axes = dims_by_axis(m)
    assert set(axes) == {('inputs["xs"][0]', 0), ('inputs["xs"][1]', 0), ('inputs["table"]["w"]', 0),
                         ('inputs["pair"][0]', 0), ('inputs["pair"][1]', 0)}
    assert all(d["expr"] == "n" and (d["min"], d["max"]) == (2, 32) for d in axes.values())
    assert m["range_constraints"] == {"n": {"min": 2, "max": 32}}


def test_non_tensor_inputs_are_specialised(tmp_path):
    inputs = {
        "x": tensor(["n", 3]), "repeats": {"int": 2}, "scale": {"float": 0.5},
        "negate": {"bool": True}, "mode": {"str": "relu"}, "extra": {"none": None},
    }
    config = config_for(tmp_path, ENTRY + "NonTensor", inputs, {"n": {"min": 2, "max": 16, "example": 3}})
    m = run_export(config)
    assert "aten.relu.default" in m["operators"] and "aten.tanh.default" not in m["operators"]
    assert "aten.neg.default" in m["operators"]
    ep = load_pt2(config)
    constants = {s["name"] for s in m["input_specs"]} - {"x"}
    assert {"repeats", "scale", "negate", "mode"} <= constants
    out = ep.module()(torch.ones(5, 3), 2, 0.5, True, "relu", None)
    assert out.shape == (10, 3) and torch.equal(out, torch.zeros(10, 3))


def test_varargs_and_keyword_only(tmp_path):
    inputs = {"x": tensor(["n"]), "rest": {"list": [tensor(["n"]), tensor([1])]}, "bias": tensor(["n"])}
    m = run_export(config_for(tmp_path, ENTRY + "Signature", inputs, {"n": {"min": 2, "max": 16, "example": 3}}))
    assert sorted(dims_by_axis(m)) == [('inputs["bias"]', 0), ('inputs["rest"][0]', 0), ('inputs["x"]', 0)]


def test_var_kwargs_with_static_sizes(tmp_path):
    inputs = {"x": tensor([3]), "rest": {"tuple": [tensor([3])]}, "bias": tensor([3]), "shift": tensor([1])}
    m = run_export(config_for(tmp_path, ENTRY + "Signature", inputs))
    assert m["dims"] == [] and m["operators"]["aten.add.Tensor"] == 2


def test_dynamic_sizes_with_var_kwargs_are_refused(tmp_path):
    """torch.export 2.13 mismatches dynamic_shapes whenever **kwargs receives inputs."""
    inputs = {"x": tensor(["n"]), "bias": tensor(["n"]), "shift": tensor([1])}
    with pytest.raises(UserError, match=r"forward's \*\*named receives"):
        run_export(config_for(tmp_path, ENTRY + "Signature", inputs, {"n": {"min": 2, "max": 16, "example": 3}}))


def test_every_dtype_family(tmp_path):
    inputs = {name: tensor([2, 3], dtype) for name, dtype in [
        ("f16", "float16"), ("f64", "float64"), ("i8", "int8"), ("u8", "uint8"),
        ("i32", "int32"), ("i64", "int64"), ("mask", "bool")]}
    config = config_for(tmp_path, ENTRY + "Dtypes", inputs)
    run_export(config)
    placeholders = [n for n in load_pt2(config).graph.nodes if n.op == "placeholder"]
    assert [str(n.meta["val"].dtype) for n in placeholders] == [
        "torch.float16", "torch.float64", "torch.int8", "torch.uint8", "torch.int32", "torch.int64", "torch.bool"]


def test_shared_dim_in_matmul_and_dynamic_hint(tmp_path):
    inputs = {"x": tensor(["m", "k"]), "y": tensor(["k", 6], hints=[None, "DYNAMIC"])}
    dims = {"m": {"min": 2, "max": 64, "example": 3}, "k": {"min": 2, "max": 16, "example": 4}}
    m = run_export(config_for(tmp_path, ENTRY + "Matmul", inputs, dims))
    axes = dims_by_axis(m)
    assert axes[('inputs["y"]', 0)]["expr"] == "k"
    assert axes[('inputs["y"]', 1)]["requested"] == "DYNAMIC"
    assert axes[('inputs["y"]', 1)]["expr"] == 'inputs["y"].shape[1]'
    assert m["range_constraints"] == {"k": {"min": 2, "max": 16}, "m": {"min": 2, "max": 64}}


def test_ir_core_aten_decomposes_unless_kept(tmp_path):
    from exporter.tests.export_harness import config_for as cfg

    inputs = {"x": tensor([8, 100]), "y": tensor([8, 100])}
    plain = run_export(cfg(tmp_path, "examples.tutorial.basic:MyModule", inputs, ir="core_aten"))
    assert "aten.linear.default" not in plain["operators"] and "aten.addmm.default" in plain["operators"]
    (tmp_path / "kept").mkdir()
    kept = run_export(cfg(tmp_path / "kept", "examples.tutorial.basic:MyModule", inputs, ir="core_aten",
                          keep=["aten.linear.default"]))
    assert kept["operators"].get("aten.linear.default") == 1


def test_executorch_example_models_as_entries(tmp_path):
    """entry may name an installed class; an EagerModelBase gives its get_eager_model()."""
    from exporter.actions.registry import ModelConfig
    from exporter.core.model_loader import load_model

    lstm = load_model(ModelConfig.from_json({"label": "//t:m", "entry": "executorch.examples.models.lstm:LSTMModel"}))
    assert isinstance(lstm, torch.nn.Module) and "LSTM" in type(lstm).__name__
    m = run_export(config_for(tmp_path, "executorch.examples.models.toy_model:AddModule",
                              {"x": tensor(["n"]), "y": tensor(["n"])}, {"n": {"min": 2, "max": 8, "example": 3}}))
    assert [(d["input"], d["expr"]) for d in m["dims"]] == [('inputs["x"]', "n"), ('inputs["y"]', "n")]
