"""Turns a shape spec (the JSON that shape_spec writes) into example inputs and dynamic_shapes.

The spec's JSON form:
  {"inputs": [{"name": "x", "value": {"tensor": {"shape": ["batch", 3, 224, 224],
                                                 "dtype": "float32"}}}],
   "dims": {"batch": {"min": 1, "max": 32, "example": 2}}}
A shape entry is an int (a static size) or the name of a dim. The rule checks the spec at
analysis time and fills in each dim's example; this module trusts those checks.
"""

import inspect

import torch

DTYPES = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "bool": torch.bool,
}


def example_tensor(shape, dtype_name, generator):
    """A seeded example tensor: normal floats, small non-negative ints, random bools."""
    dtype = DTYPES[dtype_name]
    if dtype.is_floating_point:
        return torch.randn(shape, generator=generator).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool()
    return torch.randint(0, 8, shape, generator=generator).to(dtype)


def make_dims(spec):
    """One torch.export.Dim per named dim in the spec."""
    dims = {}
    for name, d in spec.get("dims", {}).items():
        bounds = {k: d[k] for k in ("min", "max") if d.get(k) is not None}
        dims[name] = torch.export.Dim(name, **bounds)
    return dims


def _concrete_shape(shape, spec):
    return [size if isinstance(size, int) else spec["dims"][size]["example"] for size in shape]


def _dynamic_entry(shape, dims):
    """The dynamic_shapes entry of one tensor: {axis: Dim} for its named axes, else None."""
    entry = {axis: dims[size] for axis, size in enumerate(shape) if isinstance(size, str)}
    return entry or None


def build_inputs(spec, forward, spec_label):
    """Returns (args, kwargs, dynamic_shapes) for torch.export.export.

    Inputs are matched to forward's parameters by name; those that can be positional are
    passed positionally, in forward's order.
    """
    from exporter.errors import UserError

    generator = torch.Generator().manual_seed(0)
    dims = make_dims(spec)
    values, dynamic = {}, {}
    for entry in spec["inputs"]:
        tensor = entry["value"]["tensor"]
        values[entry["name"]] = example_tensor(
            _concrete_shape(tensor["shape"], spec), tensor["dtype"], generator
        )
        dynamic[entry["name"]] = _dynamic_entry(tensor["shape"], dims)

    params = inspect.signature(forward).parameters
    takes_var_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    unknown = [n for n in values if n not in params and not takes_var_kwargs]
    if unknown:
        raise UserError(
            f"shape_spec {spec_label} names input {unknown[0]!r}, but forward takes "
            f"({', '.join(params)}); rename the key in `inputs` to one of those"
        )
    missing = [
        n
        for n, p in params.items()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        and n not in values
    ]
    if missing:
        raise UserError(
            f"forward needs input {missing[0]!r}, which shape_spec {spec_label} does not "
            f"declare; add it to `inputs`, e.g. inputs = {{{missing[0]!r}: tensor([...])}}"
        )

    args = []
    for name, p in params.items():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or name not in values:
            break
        args.append(values.pop(name))
    return tuple(args), values, dynamic


def positional_names(forward, count):
    """The names of forward's first `count` parameters: the inputs build_inputs passed by position."""
    return list(inspect.signature(forward).parameters)[:count]
