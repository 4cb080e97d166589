"""The table of bad specs and exports: each must fail with one line naming its target and fix.

A case is (target, BUILD snippet, needles): building the snippet's targets must print a line
that contains the target's label and every needle. Cases whose snippet fails while the BUILD
file loads (a macro's fail()) get a package of their own, so they cannot hide the others.
"""

# Models the snippets export; written to //bad:models.py.
MODELS = '''
import torch


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class Double(torch.nn.Module):
    def forward(self, x):
        return x * 2


class FourRows(torch.nn.Module):
    """Works only for 4 rows: a dim named for axis 0 specialises."""

    def forward(self, x):
        if x.shape[0] == 4:
            return x + 1
        return x - 1


class Bounded(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 512:
            return x.sum(0)
        return x * 2
'''

# Loaded at the top of every generated BUILD file.
PRELUDE = '''load("//rules:defs.bzl", "AUTO", "DYNAMIC", "STATIC", "dim", "shape_spec", "tensor", "torch_export", "torch_model")

torch_model(name = "add", srcs = ["//bad:models.py"], entry = "bad.models:Add")
torch_model(name = "double", srcs = ["//bad:models.py"], entry = "bad.models:Double")
torch_model(name = "four_rows", srcs = ["//bad:models.py"], entry = "bad.models:FourRows")
torch_model(name = "bounded", srcs = ["//bad:models.py"], entry = "bad.models:Bounded")
'''

# Caught at analysis time, before any Python runs.
ANALYSIS = [
    ("//bad:min_above_max",
     'shape_spec(name = "min_above_max", inputs = {"x": tensor(["n"])}, dims = {"n": dim(min = 8, max = 4)})',
     ['dims["n"]', "min = 8 > max = 4", "dim(min = 4, max = 8)"]),
    ("//bad:negative_min",
     'shape_spec(name = "negative_min", inputs = {"x": tensor(["n"])}, dims = {"n": dim(min = -1)})',
     ['dims["n"]', "min = -1", "non-negative int"]),
    ("//bad:negative_size",
     'shape_spec(name = "negative_size", inputs = {"x": tensor([-3, 4])})',
     ['inputs["x"] axis 0 is -3', "non-negative int"]),
    ("//bad:unknown_dim",
     'shape_spec(name = "unknown_dim", inputs = {"x": tensor(["batch", 3])}, dims = {"n": dim()})',
     ['inputs["x"] axis 0', 'names dim "batch"', 'add dims = {"batch": dim(', "or use one of n"]),
    ("//bad:example_outside_range",
     'shape_spec(name = "example_outside_range", inputs = {"x": tensor(["n"])}, dims = {"n": dim(min = 2, max = 8, example = 16)})',
     ['dims["n"]', "example = 16 outside its range [2, 8]"]),
    ("//bad:range_below_two",
     'shape_spec(name = "range_below_two", inputs = {"x": tensor(["n"])}, dims = {"n": dim(max = 1)})',
     ['dims["n"]', "up to 1", "example = N"]),
    ("//bad:misspelled_hint",
     'shape_spec(name = "misspelled_hint", inputs = {"x": tensor([4], hint = "AUTOO")})',
     ['inputs["x"] hint "AUTOO" is not a hint', "use AUTO"]),
    ("//bad:lowercase_hint",
     'shape_spec(name = "lowercase_hint", inputs = {"x": tensor([4])}, hint = "dynamic")',
     ['hint "dynamic" is not a hint', "use DYNAMIC"]),
    ("//bad:hint_rank_mismatch",
     'shape_spec(name = "hint_rank_mismatch", inputs = {"x": tensor([4, 5], hint = [AUTO])})',
     ['inputs["x"]', "1 hints for a rank-2 shape", "one hint (or None) per axis"]),
    ("//bad:hint_axis_out_of_rank",
     'shape_spec(name = "hint_axis_out_of_rank", inputs = {"x": tensor([4, 5], hint = {2: DYNAMIC})})',
     ['inputs["x"]', "axis 2", "rank 2", "use axes 0..1"]),
    ("//bad:dynamic_at_one",
     'shape_spec(name = "dynamic_at_one", inputs = {"x": tensor([1, 4], hint = {0: DYNAMIC})})',
     ['inputs["x"] axis 0 is DYNAMIC', "size 1", "size >= 2", "AUTO"]),
    ("//bad:hint_on_named_dim",
     'shape_spec(name = "hint_on_named_dim", inputs = {"x": tensor(["n"], hint = {0: AUTO})}, dims = {"n": dim()})',
     ['inputs["x"] axis 0 is the dim "n"', "int sizes only"]),
    ("//bad:nonlinear",
     'shape_spec(name = "nonlinear", inputs = {"x": tensor(["n", "n*n"])}, dims = {"n": dim()})',
     ['inputs["x"] axis 1 = "n*n"', "non-linear", "a*dim+b"]),
    ("//bad:two_dims_in_one_size",
     'shape_spec(name = "two_dims_in_one_size", inputs = {"x": tensor(["a", "b"]), "y": tensor(["a+b"])}, dims = {"a": dim(), "b": dim()})',
     ['inputs["y"] axis 0 = "a+b"', "several dims (a, b)", "exactly one dim"]),
    ("//bad:division",
     'shape_spec(name = "division", inputs = {"x": tensor(["n"]), "y": tensor(["n/2"])}, dims = {"n": dim()})',
     ['inputs["y"] axis 0 = "n/2"', "not linear", '"2*dx"']),
    ("//bad:derived_below_zero",
     'shape_spec(name = "derived_below_zero", inputs = {"x": tensor(["n"]), "y": tensor(["n-1"])}, dims = {"n": dim(max = 64)})',
     ['inputs["y"] axis 0 = "n-1" is negative when n = 0', 'dims["n"] = dim(min = 1, max = 64)']),
    ("//bad:unused_dim",
     'shape_spec(name = "unused_dim", inputs = {"x": tensor([4])}, dims = {"n": dim()})',
     ['dims["n"] is declared but no input uses it']),
    ("//bad:unknown_dtype",
     'shape_spec(name = "unknown_dtype", inputs = {"x": tensor([4], dtype = "float")})',
     ['inputs["x"] has dtype "float"', "float32"]),
    ("//bad:fill_of_wrong_type",
     'shape_spec(name = "fill_of_wrong_type", inputs = {"x": tensor([], dtype = "bool", fill = 3)})',
     ['inputs["x"] has fill = 3 for dtype bool', "bool fill"]),
    ("//bad:invalid_dim_name",
     'shape_spec(name = "invalid_dim_name", inputs = {"x": tensor(["my-dim"])}, dims = {"my-dim": dim()})',
     ['dims["my-dim"] is not a valid dim name']),
    ("//bad:keep_without_core_aten",
     'shape_spec(name = "s_keep", inputs = {"x": tensor([4])})\n'
     'torch_export(name = "keep_without_core_aten", model = ":double", shapes = ":s_keep", keep = ["aten.mul.Tensor"])',
     ["keep only applies to ir = \"core_aten\"", "set ir = \"core_aten\""]),
    ("//bad:malformed_op_name",
     'shape_spec(name = "s_op", inputs = {"x": tensor([4])})\n'
     'torch_export(name = "malformed_op_name", model = ":double", shapes = ":s_op", ir = "inference", decompose = ["gelu"])',
     ['decompose has "gelu"', "namespace.op.overload"]),
]

# Caught by the exporter in the TorchExport action.
ACTION = [
    ("//bad:input_not_in_forward_ep",
     'shape_spec(name = "s_inp", inputs = {"inp": tensor([4])})\n'
     'torch_export(name = "input_not_in_forward_ep", model = ":double", shapes = ":s_inp")',
     ["//bad:s_inp", 'names input "inp"', "forward takes (x)", "rename the key"]),
    ("//bad:missing_input_ep",
     'shape_spec(name = "s_missing", inputs = {"x": tensor([4])})\n'
     'torch_export(name = "missing_input_ep", model = ":add", shapes = ":s_missing")',
     ['forward needs input "y"', "//bad:s_missing", 'add it to `inputs`, e.g. inputs = {"y": tensor([...])}']),
    ("//bad:named_dim_specialises_ep",
     'shape_spec(name = "s_four", inputs = {"x": tensor(["n", 3])}, dims = {"n": dim(max = 64, example = 4)})\n'
     'torch_export(name = "named_dim_specialises_ep", model = ":four_rows", shapes = ":s_four")',
     ["shape_spec //bad:s_four does not fit model //bad:four_rows", "the model needs n to be exactly 4",
      'inputs["x"] axis 0 becomes 4',
      'remove dims["n"]']),
    ("//bad:dynamic_hint_specialises_ep",
     'shape_spec(name = "s_dyn", inputs = {"x": tensor([4, 3], hint = {0: DYNAMIC})})\n'
     'torch_export(name = "dynamic_hint_specialises_ep", model = ":four_rows", shapes = ":s_dyn")',
     ["//bad:s_dyn", 'the model needs inputs["x"] axis 0 to be exactly 4', 'make inputs["x"] axis 0 static',
      "write 4 there"]),
    ("//bad:range_too_wide_ep",
     'shape_spec(name = "s_wide", inputs = {"x": tensor(["n", 3])}, dims = {"n": dim(min = 2, max = 1024)})\n'
     'torch_export(name = "range_too_wide_ep", model = ":bounded", shapes = ":s_wide")',
     ["//bad:s_wide", 'dims["n"] = dim(min = 2, max = 512)']),
    ("//bad:unknown_operator_ep",
     'shape_spec(name = "s_unknown_op", inputs = {"x": tensor([4])})\n'
     'torch_export(name = "unknown_operator_ep", model = ":double", shapes = ":s_unknown_op", ir = "inference", decompose = ["aten.nosuch.default"])',
     ["decompose names 'aten.nosuch.default'", "not a registered operator"]),
    ("//bad:rank_mismatch_ep",
     'shape_spec(name = "s_rank", inputs = {"x": tensor(["n", 3]), "y": tensor(["n", 3, 3])}, dims = {"n": dim(max = 8)})\n'
     'torch_export(name = "rank_mismatch_ep", model = ":add", shapes = ":s_rank")',
     ["//bad:s_rank", "//bad:add", 'x ["n", 3] float32, y ["n", 3, 3] float32',
      "bad/models.py:7 (return x + y)"]),
]

# Failures while the BUILD file loads (a macro's fail(), an attr outside its `values`) put the
# whole package in error, so each of these gets a package of its own.
LOADING = [
    ("//bad_ir:misspelled_ir",
     'shape_spec(name = "s_ir", inputs = {"x": tensor([4])})\n'
     'torch_export(name = "misspelled_ir", model = ":double", shapes = ":s_ir", ir = "inferense")',
     ["'ir' attribute", "has to be one of", "'inference'", "instead of 'inferense'"]),
    ("//bad_dims_value:s",
     'shape_spec(name = "s", inputs = {"x": tensor(["n"])}, dims = {"n": 4})',
     ['dims["n"] is 4', "dim(min = ..., max = ...)"]),
    ("//bad_input_value:s",
     'shape_spec(name = "s", inputs = {"x": [tensor([2]), len]})',
     ['inputs["x"][1] is a builtin_function_or_method', "tensor(...)"]),
]

# The torch.export tutorial's failing cases (//examples/tutorial, tagged manual).
TUTORIAL = [
    ("//examples/tutorial:conflicting_dims_ep", None,
     ["shape_spec //examples/tutorial:two_free_dims", 'inputs["y"] axis 0 becomes "dx+1"', 'remove dims["dy"]']),
    ("//examples/tutorial:unchecked_branch_ep", None,
     ["data-dependent", "examples/tutorial/data_dependent.py:21 (if n > 2:)", "torch._check", "torch.cond"]),
    ("//examples/tutorial:uses_id_strict_ep", None,
     ["examples/tutorial/non_strict.py", "Set strict = False on torch_export //examples/tutorial:uses_id_strict_ep"]),
]

CASES = ANALYSIS + ACTION + LOADING + TUTORIAL
