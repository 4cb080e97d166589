"""shape_spec, tensor and dim: the inputs a model is traced with, and which sizes may vary."""

load("//rules:providers.bzl", "ShapeSpecInfo")

DTYPES = [
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "bool",
]

def tensor(shape, dtype = "float32"):
    """A tensor input. shape lists ints (static sizes) and dim names (dynamic sizes)."""
    return {"tensor": {"dtype": dtype, "shape": shape}}

def dim(min = None, max = None, example = None):
    """A named dynamic dimension with an optional range and tracing size."""
    return {"example": example, "max": max, "min": min}

def _check_dim(name, d):
    """Validates one dim and returns it with its tracing example chosen."""
    where = "dims[{}]".format(repr(name))
    for key in ("min", "max", "example"):
        value = d.get(key)
        if value != None and (type(value) != "int" or value < 0):
            fail("{} has {} = {}; it must be a non-negative int or unset".format(where, key, repr(value)))
    lo, hi, example = d.get("min"), d.get("max"), d.get("example")
    if lo != None and hi != None and lo > hi:
        fail("{} has min = {} > max = {}; swap them or fix the bound".format(where, lo, hi))
    if example == None:
        # Tracing at 0 or 1 would specialise the dim; trace at 2 or the lowest size above it.
        example = lo if lo != None and lo > 2 else 2
        if hi != None and example > hi:
            fail("{} allows only sizes up to {}, so it cannot be traced dynamically above 1; ".format(where, hi) +
                 "raise max, make the size static, or pin the tracing size with example = N")
    elif (lo != None and example < lo) or (hi != None and example > hi):
        fail("{} has example = {} outside [{}, {}]; pick an example inside the range".format(
            where,
            example,
            lo,
            hi,
        ))
    return {"example": example, "max": hi, "min": lo}

def _check_input(name, value, dims, used):
    where = "inputs[{}]".format(repr(name))
    if type(value) != "dict" or "tensor" not in value:
        fail("{} must be written tensor([...], dtype = ...)".format(where))
    t = value["tensor"]
    if t["dtype"] not in DTYPES:
        fail("{} has dtype {}; use one of {}".format(where, repr(t["dtype"]), ", ".join(DTYPES)))
    for axis, size in enumerate(t["shape"]):
        if type(size) == "string":
            if size not in dims:
                fail("{} axis {} names dim {}, which `dims` does not declare; add dims = {{{}: dim(min = ..., max = ...)}}".format(
                    where,
                    axis,
                    repr(size),
                    repr(size),
                ))
            used[size] = True
        elif type(size) != "int" or size < 0:
            fail("{} axis {} is {}; a size is a non-negative int or a dim name".format(where, axis, repr(size)))

def _shape_spec_impl(ctx):
    raw = json.decode(ctx.attr.spec_json)
    dims = {name: _check_dim(name, d) for name, d in raw["dims"].items()}
    used = {}
    for name, value in raw["inputs"].items():
        _check_input(name, value, dims, used)
    for name in dims:
        if name not in used:
            fail("dims[{}] is declared but no input uses it; use it in a tensor shape or remove it".format(repr(name)))
    spec = {
        "dims": dims,
        "inputs": [{"name": name, "value": value} for name, value in raw["inputs"].items()],
    }
    return [ShapeSpecInfo(label = ctx.label, spec = spec)]

shape_spec_rule = rule(
    implementation = _shape_spec_impl,
    doc = "The example inputs and dynamic dims of an export. Many exports can share one.",
    attrs = {
        "spec_json": attr.string(mandatory = True, doc = "inputs and dims as JSON (set by the macro)."),
    },
    provides = [ShapeSpecInfo],
)

def shape_spec(name, inputs, dims = {}, **kwargs):
    """Declares a shape spec from tensor(...) inputs and dim(...) dims."""
    shape_spec_rule(name = name, spec_json = json.encode({"dims": dims, "inputs": inputs}), **kwargs)
