"""Every bad shape_spec fails analysis with one message that names the spec and the fix: a table
of bad specs, each declared with its test in one call, as skylib's analysis_failure_test suites
do (failures that need an export are in //tests/specs:bad_specs_test)."""

load("//rules:defs.bzl", "AUTO", "DYNAMIC", "dim", "shape_spec", "tensor")
load("//tests/starlark:bad_target_test.bzl", "bad_target_test_suite")

# name: the bad spec's target (its test is <name>_test); attrs: its shape_spec arguments;
# needles: fragments its failure message must hold besides the spec's label.
BAD_SPECS = [
    struct(
        name = "min_above_max",
        attrs = dict(dims = {"n": dim(max = 4, min = 8)}, inputs = {"x": tensor(["n"])}),
        needles = ["dims[\"n\"]", "min = 8 > max = 4", "dim(min = 4, max = 8)"],
    ),
    struct(
        name = "negative_min",
        attrs = dict(dims = {"n": dim(min = -1)}, inputs = {"x": tensor(["n"])}),
        needles = ["dims[\"n\"]", "min = -1", "non-negative int"],
    ),
    struct(
        name = "negative_size",
        attrs = dict(inputs = {"x": tensor([-3, 4])}),
        needles = ["inputs[\"x\"] axis 0 is -3", "non-negative int"],
    ),
    struct(
        name = "unknown_dim",
        attrs = dict(dims = {"n": dim()}, inputs = {"x": tensor(["batch", 3])}),
        needles = ["inputs[\"x\"] axis 0", "names dim \"batch\"", "add dims = {\"batch\": dim(", "or use one of n"],
    ),
    struct(
        name = "example_outside_range",
        attrs = dict(dims = {"n": dim(example = 16, max = 8, min = 2)}, inputs = {"x": tensor(["n"])}),
        needles = ["dims[\"n\"]", "example = 16 outside its range [2, 8]"],
    ),
    struct(
        name = "range_below_two",
        attrs = dict(dims = {"n": dim(max = 1)}, inputs = {"x": tensor(["n"])}),
        needles = ["dims[\"n\"]", "up to 1", "example = N"],
    ),
    struct(
        name = "misspelled_hint",
        attrs = dict(inputs = {"x": tensor([4], hint = "AUTOO")}),
        needles = ["inputs[\"x\"] hint \"AUTOO\" is not a hint", "use AUTO"],
    ),
    struct(
        name = "lowercase_hint",
        attrs = dict(hint = "dynamic", inputs = {"x": tensor([4])}),
        needles = ["hint \"dynamic\" is not a hint", "use DYNAMIC"],
    ),
    struct(
        name = "hint_rank_mismatch",
        attrs = dict(inputs = {"x": tensor([4, 5], hint = [AUTO])}),
        needles = ["inputs[\"x\"]", "1 hints for a rank-2 shape", "one hint (or None) per axis"],
    ),
    struct(
        name = "hint_axis_out_of_rank",
        attrs = dict(inputs = {"x": tensor([4, 5], hint = {2: DYNAMIC})}),
        needles = ["inputs[\"x\"]", "axis 2", "rank 2", "use axes 0..1"],
    ),
    struct(
        name = "dynamic_at_one",
        attrs = dict(inputs = {"x": tensor([1, 4], hint = {0: DYNAMIC})}),
        needles = ["inputs[\"x\"] axis 0 is DYNAMIC", "size 1", "size >= 2", "AUTO"],
    ),
    struct(
        name = "hint_on_named_dim",
        attrs = dict(dims = {"n": dim()}, inputs = {"x": tensor(["n"], hint = {0: AUTO})}),
        needles = ["inputs[\"x\"] axis 0 is the dim \"n\"", "int sizes only"],
    ),
    struct(
        name = "nonlinear",
        attrs = dict(dims = {"n": dim()}, inputs = {"x": tensor(["n", "n*n"])}),
        needles = ["inputs[\"x\"] axis 1 = \"n*n\"", "non-linear", "a*dim+b"],
    ),
    struct(
        name = "two_dims_in_one_size",
        attrs = dict(dims = {"a": dim(), "b": dim()}, inputs = {"x": tensor(["a", "b"]), "y": tensor(["a+b"])}),
        needles = ["inputs[\"y\"] axis 0 = \"a+b\"", "several dims (a, b)", "exactly one dim"],
    ),
    struct(
        name = "division",
        attrs = dict(dims = {"n": dim()}, inputs = {"x": tensor(["n"]), "y": tensor(["n/2"])}),
        needles = ["inputs[\"y\"] axis 0 = \"n/2\"", "not linear", "\"2*dx\""],
    ),
    struct(
        name = "derived_below_zero",
        attrs = dict(dims = {"n": dim(max = 64)}, inputs = {"x": tensor(["n"]), "y": tensor(["n-1"])}),
        needles = ["inputs[\"y\"] axis 0 = \"n-1\" is negative when n = 0", "dims[\"n\"] = dim(min = 1, max = 64)"],
    ),
    struct(
        name = "unused_dim",
        attrs = dict(dims = {"n": dim()}, inputs = {"x": tensor([4])}),
        needles = ["dims[\"n\"] is declared but no input uses it"],
    ),
    struct(
        name = "unknown_dtype",
        attrs = dict(inputs = {"x": tensor([4], dtype = "float")}),
        needles = ["inputs[\"x\"] has dtype \"float\"", "float32"],
    ),
    struct(
        name = "fill_of_wrong_type",
        attrs = dict(inputs = {"x": tensor([], dtype = "bool", fill = 3)}),
        needles = ["inputs[\"x\"] has fill = 3 for dtype bool", "bool fill"],
    ),
    struct(
        name = "invalid_dim_name",
        attrs = dict(dims = {"my-dim": dim()}, inputs = {"x": tensor(["my-dim"])}),
        needles = ["dims[\"my-dim\"] is not a valid dim name"],
    ),
]

def bad_spec_test_suite(name):
    """Declares every bad spec of BAD_SPECS with its test, and the test_suite `name` of them all."""
    bad_target_test_suite(name, shape_spec, BAD_SPECS)
