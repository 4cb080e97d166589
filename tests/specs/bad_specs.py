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


class Linear4(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class AliasedBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        whole = torch.zeros(4, 8)
        self.register_buffer("whole", whole)
        self.register_buffer("row", whole[0])

    def forward(self, x):
        self.row.add_(x)
        return self.whole.sum(0)


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(8))

    def forward(self, x):
        self.total.add_(x)
        return self.total * 1


def too_many_rows():
    return [{"x": torch.randn(2, 4)}, {"x": torch.randn(9, 4)}]


def no_batches():
    return []


def broken_calibration():
    raise ValueError("the calibration set is not there")


def changing_calibration():
    import time

    return [{"x": torch.full((2, 4), float(time.perf_counter_ns() % 1000))}]
'''

# Loaded at the top of every generated BUILD file.
PRELUDE = '''load("//rules:defs.bzl", "AUTO", "DYNAMIC", "STATIC", "calibration_data", "coreml", "dim", "executorch_program", "executorch_programs", "shape_spec", "tensor", "torch_export", "torch_model", "torch_quantize")

torch_model(name = "add", srcs = ["//bad:models.py"], entry = "bad.models:Add")
torch_model(name = "double", srcs = ["//bad:models.py"], entry = "bad.models:Double")
torch_model(name = "four_rows", srcs = ["//bad:models.py"], entry = "bad.models:FourRows")
torch_model(name = "bounded", srcs = ["//bad:models.py"], entry = "bad.models:Bounded")
torch_model(name = "linear4", srcs = ["//bad:models.py"], entry = "bad.models:Linear4")
'''

# Calibration batches for //bad:linear4, each from an entry in models.py.
def _calibration(name, entry):
    return (f'calibration_data(name = "{name}", srcs = ["//bad:models.py"], entry = "bad.models:{entry}", '
            f'shapes = ":s_rows")')


# Caught at analysis time, before any Python runs: tests/starlark/<rule>/BUILD tests those in-process
# (skylib's analysistest), with the same messages.

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
    ("//bad:missing_callable_ep",
     'torch_model(name = "nope", srcs = ["//bad:models.py"], entry = "bad.models:Nope")\n'
     'shape_spec(name = "s_nope", inputs = {"x": tensor([4])})\n'
     'torch_export(name = "missing_callable_ep", model = ":nope", shapes = ":s_nope")',
     ["torch_model //bad:nope", "module 'bad.models' has no 'Nope'", "set `entry` to one of its callables",
      "AliasedBuffer, Bounded, Counter, Double"]),
    ("//bad:bad_init_args_ep",
     'torch_model(name = "add_width", srcs = ["//bad:models.py"], entry = "bad.models:Add", init_args = {"width": 4})\n'
     'shape_spec(name = "s_width", inputs = {"x": tensor([4]), "y": tensor([4])})\n'
     'torch_export(name = "bad_init_args_ep", model = ":add_width", shapes = ":s_width")',
     ["torch_model //bad:add_width", "calling 'bad.models:Add' with init_args {'width': 4} failed",
      "fix `init_args`"]),
    ("//bad:rank_mismatch_ep",
     'shape_spec(name = "s_rank", inputs = {"x": tensor(["n", 3]), "y": tensor(["n", 3, 3])}, dims = {"n": dim(max = 8)})\n'
     'torch_export(name = "rank_mismatch_ep", model = ":add", shapes = ":s_rank")',
     ["//bad:s_rank", "//bad:add", 'x ["n", 3] float32, y ["n", 3, 3] float32',
      "bad/models.py:7 (return x + y)"]),
    # Quantization (the CalibrationData and TorchQuantize actions).
    ("//bad:calib_out_of_range",
     'shape_spec(name = "s_rows", inputs = {"x": tensor(["n", 4])}, dims = {"n": dim(max = 8)})\n'
     + _calibration("calib_out_of_range", "too_many_rows"),
     ["calibration_data //bad:calib_out_of_range", 'batch 1, input "x" axis 0 has size 9',
      "outside its range [0, 8] in shape_spec //bad:s_rows", "give a size inside it"]),
    ("//bad:calib_empty", _calibration("calib_empty", "no_batches"),
     ["calibration_data //bad:calib_empty has no batches", "give it at least one"]),
    ("//bad:calib_raises", _calibration("calib_raises", "broken_calibration"),
     ["raised ValueError: the calibration set is not there", "(at bad/models.py:", "fix the entry"]),
    ("//bad:calib_changes", _calibration("calib_changes", "changing_calibration"),
     ["gave different batches on two calls", "seeded torch.Generator"]),
    ("//bad:nothing_to_quantize_ep",
     'shape_spec(name = "s_nothing", inputs = {"x": tensor([4])})\n'
     'torch_export(name = "float_only_ep", model = ":double", shapes = ":s_nothing")\n'
     'torch_quantize(name = "nothing_to_quantize_ep", exported = ":float_only_ep", scheme = "int8_dynamic_per_channel")',
     ["found nothing to quantize in //bad:float_only_ep", "aten.mul.Tensor", "lower the float program"]),
    # Mutable buffers (the ExecuTorchLower action).
    ("//bad:aliased_buffer_pte",
     'torch_model(name = "aliased", srcs = ["//bad:models.py"], entry = "bad.models:AliasedBuffer")\n'
     'shape_spec(name = "s_row", inputs = {"x": tensor([8])})\n'
     'torch_export(name = "aliased_ep", model = ":aliased", shapes = ":s_row")\n'
     'executorch_program(name = "aliased_buffer_pte", exported = ":aliased_ep")',
     ["//bad:aliased_ep (method forward) mutates buffer 'row' with aten.add_.Tensor", "shares memory with 'whole'",
      "register 'row' as a tensor of its own"]),
    ("//bad:unknown_initialized_buffer_pte",
     'torch_model(name = "counter", srcs = ["//bad:models.py"], entry = "bad.models:Counter")\n'
     'torch_export(name = "counter_ep", model = ":counter", shapes = ":s_row")\n'
     'executorch_program(name = "unknown_initialized_buffer_pte", exported = ":counter_ep", initialized_buffers = ["totals"])',
     ["initialized_buffers names 'totals', which no method of the program mutates", "(total)"]),
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
    # A Core ML variant runs on Apple hardware only: it must say that it has no numerics_test.
    ("//bad_coreml_variant:v",
     'executorch_programs(name = "v", exported = ":v_ep", variants = {"fp16": {"backends": [coreml()]}})',
     ['variant "fp16" is lowered for coreml, which runs on Apple hardware only',
      'set "numerics": None in that variant']),
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

CASES = ACTION + LOADING + TUTORIAL
