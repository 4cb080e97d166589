"""Checks the {dim: size} dicts that name test shapes (numerics_test, bundled_program)."""

def full_sizes(where, sizes, spec):
    """Checks one {dim name: size} dict against a shape spec; returns every dim's size.

    Args:
      where: the start of a failure message, naming the target and the entry ("... inputs[0]").
      sizes: the dict the BUILD file gives, e.g. {"batch": 7}.
      spec: the ShapeSpecInfo the sizes are for.

    Returns:
      {dim name: size} for every dim of the spec; dims that `sizes` does not name take their
      tracing example.
    """
    dims = spec.spec["dims"]
    if type(sizes) != "dict":
        fail("{} must be a dict of dim name to size, e.g. {{\"batch\": 2}}, not a {}".format(where, type(sizes)))
    full = {name: d["example"] for name, d in dims.items()}
    for name, size in sizes.items():
        if name not in dims:
            fail("{} names dim {}, which shape_spec {} does not declare; use one of {}".format(
                where,
                repr(name),
                spec.label,
                sorted(dims.keys()),
            ))
        lo, hi = dims[name].get("min"), dims[name].get("max")
        if type(size) != "int" or (lo != None and size < lo) or (hi != None and size > hi):
            fail("{}[{}] = {} is outside the dim's range [{}, {}]; pick a size inside it".format(
                where,
                repr(name),
                repr(size),
                lo,
                hi,
            ))
        full[name] = size
    return full
