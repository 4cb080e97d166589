"""Checks what each tutorial export recorded in its .pt2.json: dim ranges, IR, operators."""

import json
import os

X, Y, W, Z = 'inputs["x"]', 'inputs["y"]', 'inputs["w"]', 'inputs["z"]'


def manifest(case):
    root = os.path.join(os.environ.get("TEST_SRCDIR", "."), os.environ.get("TEST_WORKSPACE", ""))
    with open(os.path.join(root, "examples", "tutorial", case + "_ep.pt2.json"), encoding="utf-8") as f:
        return json.load(f)


def axis(m, path, index):
    found = [d for d in m["dims"] if d["input"] == path and d["axis"] == index]
    assert len(found) == 1, m["dims"]
    return found[0]


def user_inputs(m):
    return [s["name"] for s in m["input_specs"] if s["kind"] == "USER_INPUT"]


def test_basic_ranges():
    m = manifest("basic")
    assert user_inputs(m) == ["x", "y"]
    assert m["dims"] == [] and m["range_constraints"] == {} and m["specialised"] == []
    assert m["export"] == {"strict": False, "ir": "training", "decompose": [], "keep": []}
    assert "aten.linear.default" in m["operators"]


def test_basic_core_aten_ranges():
    m = manifest("basic_core_aten")
    assert m["export"]["ir"] == "core_aten"
    assert "aten.linear.default" in m["operators"]  # kept
    assert "aten.relu.default" in m["operators"]  # the in-place relu_ became functional
    assert "aten.relu_.default" not in m["operators"]


def test_basic_inference_ranges():
    m = manifest("basic_inference")
    assert m["export"]["decompose"] == ["aten.linear"]
    assert "aten.linear.default" not in m["operators"]
    assert "aten.addmm.default" in m["operators"]


def test_dynamic_ranges():
    """Under AUTO, export relates w, x, y and z, and keeps w's second size at 5."""
    m = manifest("dynamic")
    x0 = axis(m, X, 0)
    assert (x0["min"], x0["max"]) == (4, 510)  # torch._check(x >= 4); w0 = x0 + 2 <= 512
    w0 = axis(m, W, 0)
    assert w0["expr"] == x0["expr"] + " + 2" and (w0["min"], w0["max"]) == (6, 512)
    assert axis(m, W, 1)["specialised"] == 5  # Linear(5, 3)
    assert axis(m, Y, 1)["expr"] == x0["expr"]  # x + y broadcasts over the same size
    y0 = axis(m, Y, 0)
    assert (y0["min"], y0["max"]) == (2, None)
    assert sorted(axis(m, Z, 0)["expr"].split("*")) == sorted([x0["expr"], y0["expr"]])
    assert [(s["input"], s["axis"]) for s in m["specialised"]] == [(W, 1)]
    assert m["range_constraints"] == {}


def test_derived_ranges():
    m = manifest("derived")
    assert m["range_constraints"]["dx"] == {"min": 4, "max": 256}
    assert m["range_constraints"]["dh"]["max"] == 64
    y0 = axis(m, Y, 0)
    assert (y0["requested"], y0["expr"], y0["min"], y0["max"]) == ("2*dx", "2*dx", 8, 512)
    z0 = axis(m, Z, 0)
    assert (z0["requested"], z0["min"], z0["max"]) == ("dx+1", 5, 257)
    assert axis(m, Y, 1)["expr"] == axis(m, X, 1)["expr"] == "dh"
    assert m["shape_spec"]["spec"]["dims"]["dx"]["example"] == 4


def test_named_ranges():
    m = manifest("named")
    assert m["range_constraints"] == {"dh": {"min": 0, "max": 512}, "dx": {"min": 4, "max": 256}}
    y0 = axis(m, Y, 0)
    assert (y0["requested"], y0["expr"], y0["min"], y0["max"]) == ("2*dx", "2*dx", 8, 512)


def test_cond_ranges():
    m = manifest("cond")
    assert m["operators"]["torch.ops.higher_order.cond"] == 1
    assert m["dims"] == []


def dynamic_rows(case, op):
    """A case that keeps its n dynamic over the whole declared range, with its special op."""
    m = manifest(case)
    assert m["range_constraints"] == {"n": {"min": 2, "max": 64}}
    assert [d["requested"] for d in m["dims"]] == ["n"] and m["specialised"] == []
    assert op in m["operators"]
    return m


def test_shape_cond_ranges():
    dynamic_rows("shape_cond", "torch.ops.higher_order.cond")


def test_map_ranges():
    dynamic_rows("map", "torch.ops.higher_order.map_impl")


def test_while_ranges():
    m = dynamic_rows("while", "torch.ops.higher_order.while_loop")
    assert axis(m, X, 0)["max"] == 64


def test_custom_op_ranges():
    m = dynamic_rows("custom_op", "tutorial.scaled_sin.default")
    assert m["export"]["ir"] == "core_aten"
    assert m["operators"]["tutorial.scaled_sin.default"] == 1  # core ATen leaves custom ops alone


def test_checked_item_ranges():
    m = dynamic_rows("checked_item", "aten.item.default")
    assert m["operators"]["aten._assert_scalar.default"] >= 2  # the two torch._check calls
    assert m["shape_spec"]["spec"]["inputs"][0]["value"]["tensor"]["fill"] == 3


def test_uses_id_ranges():
    m = manifest("uses_id")
    assert m["export"]["strict"] is False
    assert m["operators"] == {"aten.add.Tensor": 2}
