"""What shape_spec's analysis produced for a spec that uses every feature (spec_json output)."""

import json
import os

import pytest


@pytest.fixture(scope="module")
def spec():
    root = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"])
    with open(os.path.join(root, "tests", "specs", "everything_json.json"), encoding="utf-8") as f:
        return json.load(f)


def value(spec, name):
    return next(e["value"] for e in spec["inputs"] if e["name"] == name)


def test_inputs_keep_their_order_and_kinds(spec):
    assert [e["name"] for e in spec["inputs"]] == [
        "tokens", "pairs", "table", "one", "scale", "steps", "flag", "mode", "nothing", "count"]
    assert value(spec, "scale") == {"float": 0.5}
    assert value(spec, "steps") == {"int": 3}
    assert value(spec, "flag") == {"bool": True}
    assert value(spec, "mode") == {"str": "fast"}
    assert value(spec, "nothing") == {"none": None}


def test_examples_avoid_0_and_1_and_respect_ranges(spec):
    dims = spec["dims"]
    assert dims["batch"] == {"min": None, "max": 64, "example": 2}
    assert dims["seq"] == {"min": 8, "max": 512, "example": 8}
    # tail-3 must trace at >= 2 too, so tail traces at 5, not at its min of 3.
    assert dims["tail"]["example"] == 5
    assert dims["pinned"]["example"] == 1  # pinned by the user


def test_derived_sizes_and_nesting(spec):
    pairs = value(spec, "pairs")
    first, rest = pairs["tuple"]
    assert first["tensor"]["shape"] == ["batch", "2*seq"]
    assert first["tensor"]["example_shape"] == [2, 16]
    assert rest["list"][0]["tensor"]["example_shape"] == [2]


def test_hints_per_dim_per_input_and_for_everything(spec):
    table = value(spec, "table")["dict"]
    assert [e["key"] for e in table] == [1, "mask"]  # an int key survives the JSON trip
    six_five, mask = table[0]["value"]["tensor"], table[1]["value"]["tensor"]
    assert six_five["hints"] == ["AUTO", "STATIC"]  # spec-wide AUTO, per-axis STATIC
    assert mask["hints"] == ["DYNAMIC", "AUTO"] and mask["dtype"] == "bool"
    assert value(spec, "tokens")["tensor"]["hints"] == [None, None]  # dims take no hint


def test_fill_and_scalars(spec):
    count = value(spec, "count")["tensor"]
    assert count == {"shape": [], "dtype": "int64", "fill": 7, "hints": [], "example_shape": []}
