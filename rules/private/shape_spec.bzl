"""shape_spec, tensor and dim: the inputs a model is traced with, and which sizes may vary.

The macro turns the user's values into tagged JSON (tuples, lists, dicts with int keys and
tensor()/dim() survive the trip); the rule checks it at analysis time and fills in every
tracing size. exporter/core/shape_spec.py documents the JSON that ShapeSpecInfo.spec carries.
"""

load("//exporter:exporter_facts.bzl", "MAX_SPEC_VALUES")
load("//rules:providers.bzl", "ShapeSpecInfo", "shape_spec_info")
load("//rules/private/lib:shape_spec_check.bzl", "check_spec")

# The dynamism hints a BUILD file loads: exporter_facts.bzl's HINTS, by name
# (//tests/starlark/shape_spec:hints_test checks that they are the same).
AUTO = "AUTO"
DYNAMIC = "DYNAMIC"
STATIC = "STATIC"

_TENSOR = "rules_torch_export.tensor"
_DIM = "rules_torch_export.dim"

def tensor(shape, dtype = "float32", hint = None, fill = None):
    """A tensor input.

    Args:
      shape: list of sizes: an int (static, or the tracing size under a hint), a dim name
        ("batch"), or a linear expression of one dim ("2*batch", "batch+1").
      dtype: "float32", "int64", "bool", ... (see SHAPE_SPEC_DTYPES in //exporter:exporter_facts.bzl).
      hint: AUTO, DYNAMIC or STATIC for every int size of this tensor; or a list with one
        hint (or None) per axis; or a dict {axis: hint}.
      fill: trace with every element equal to this value (e.g. fill = 4 for a scalar that
        .item() reads); random values when unset.
    """
    return struct(kind = _TENSOR, shape = shape, dtype = dtype, hint = hint, fill = fill)

def dim(min = None, max = None, example = None):
    """A named dynamic size. min and max are inclusive; either may stay open (None).

    example pins the size used for tracing; by default it is the smallest size >= 2 that the
    range allows, so that torch.export does not specialise the dim to 0 or 1.
    """
    return struct(kind = _DIM, min = min, max = max, example = example)

def _encode_hint(hint):
    if type(hint) == "dict":
        return {"by_axis": [[axis, h] for axis, h in hint.items()]}
    if type(hint) in ("list", "tuple"):
        return {"per_axis": list(hint)}
    return {"all": hint}

def _encode_value(value, root_path, where):
    """Tags a nested input value as JSON-able dicts: {"tensor": ...}, {"tuple": [...]}, ..."""
    root = {}
    stack = [(value, root, root_path)]
    for _ in range(MAX_SPEC_VALUES):
        if not stack:
            return root
        v, out, path = stack.pop()
        t = type(v)
        if t == "struct" and getattr(v, "kind", None) == _TENSOR:
            out["tensor"] = {
                "shape": list(v.shape) if type(v.shape) in ("list", "tuple") else v.shape,
                "dtype": v.dtype,
                "hint": None if v.hint == None else _encode_hint(v.hint),
                "fill": v.fill,
            }
        elif t == "bool":
            out["bool"] = v
        elif t == "int":
            out["int"] = v
        elif t == "float":
            out["float"] = v
        elif t == "string":
            out["str"] = v
        elif t == "NoneType":
            out["none"] = None
        elif t in ("list", "tuple"):
            items = [{} for _ in v]
            out[t] = items
            for i, item in enumerate(v):
                stack.append((item, items[i], "{}[{}]".format(path, i)))
        elif t == "dict":
            entries = []
            for key, item in v.items():
                if type(key) not in ("string", "int"):
                    fail("{}{} has key {}; dict keys must be strings or ints".format(where, path, repr(key)))
                child = {}
                entries.append({"key": key, "value": child})
                stack.append((item, child, "{}[{}]".format(path, repr(key))))
            out["dict"] = entries
        else:
            fail("{}{} is a {}; an input is tensor(...), an int, float, bool, string or None, ".format(
                where,
                path,
                t,
            ) + "or a list, tuple or dict of those")
    fail("{}{} nests too deeply".format(where, root_path))

def encode_inputs(where, inputs):
    """shape_spec's inputs ({name: value}) as the tagged JSON list its rule checks."""
    if type(inputs) != "dict":
        fail("{}inputs must be a dict from forward's parameter names to values".format(where))
    return [
        {"name": name, "value": _encode_value(value, "inputs[{}]".format(repr(name)), where)}
        for name, value in inputs.items()
    ]

def encode_dims(dims, where):
    """shape_spec's dims ({name: dim(...)}) as the JSON its rule checks."""
    return _encode_dims(dims, where)

def _encode_dims(dims, where):
    encoded = {}
    for name, d in dims.items():
        if type(d) != "struct" or getattr(d, "kind", None) != _DIM:
            fail("{}dims[{}] is {}; write it as dim(min = ..., max = ...)".format(where, repr(name), repr(d)))
        encoded[name] = {"min": d.min, "max": d.max, "example": d.example}
    return encoded

def _shape_spec_impl(ctx):
    raw = json.decode(ctx.attr.spec_json)
    spec = check_spec(raw, "shape_spec {}: ".format(ctx.label))
    return [shape_spec_info(label = ctx.label, spec = spec)]

shape_spec_rule = rule(
    implementation = _shape_spec_impl,
    doc = "The example inputs and dynamic dims of an export. Many exports can share one.",
    attrs = {
        "spec_json": attr.string(mandatory = True, doc = "inputs, dims and hint as tagged JSON (set by the macro)."),
    },
    provides = [ShapeSpecInfo],
)

def shape_spec(name, inputs, dims = {}, hint = None, **kwargs):
    """Declares the inputs of an export and which of their sizes may vary.

    Args:
      name: the target name.
      inputs: dict from forward's parameter names to values: tensor(...), int, float, bool,
        string, None, or lists, tuples and dicts of those. Names that forward does not take
        go to its **kwargs; a *args parameter takes a list or tuple.
      dims: dict from dim names to dim(...); the dims that tensor shapes name.
      hint: AUTO, DYNAMIC or STATIC for every int size that has no hint of its own.
      **kwargs: common attributes (visibility, tags, ...).
    """
    where = "shape_spec //{}:{}: ".format(native.package_name(), name)
    spec = {"dims": _encode_dims(dims, where), "hint": hint, "inputs": encode_inputs(where, inputs)}
    shape_spec_rule(name = name, spec_json = json.encode(spec), **kwargs)
