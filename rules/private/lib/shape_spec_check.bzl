"""Analysis-time checks of a shape_spec, and the tracing sizes it fills in.

Every failure names the spec target (through `where`), the field at fault, and the fix.
"""

load("//exporter:exporter_facts.bzl", "HINTS", "MAX_SPEC_VALUES", DTYPES = "SHAPE_SPEC_DTYPES")
load(":linear_expr.bzl", "is_identifier", "parse_linear")

# Starlark has no recursion and no while: the walks over a spec's nested inputs (the macro's
# encoding in shape_spec.bzl, the checks here) take at most MAX_SPEC_VALUES steps
# (exporter/core/shape_spec.py's MAX_VALUES, which the exporter reads in full).

def _is_int(v):
    return type(v) == "int"

def _check_dim_fields(where, name, d):
    path = "dims[{}]".format(repr(name))
    if type(name) != "string" or not is_identifier(name):
        fail("{}{} is not a valid dim name; use letters, digits and _ (e.g. \"batch\")".format(where, path))
    for key in ("min", "max", "example"):
        value = d.get(key)
        if value != None and (not _is_int(value) or value < 0):
            fail("{}{} has {} = {}; it must be a non-negative int or unset (e.g. dim(min = 2, max = 64))".format(
                where,
                path,
                key,
                repr(value),
            ))
    lo, hi = d.get("min"), d.get("max")
    if lo != None and hi != None and lo > hi:
        fail("{}{} has min = {} > max = {}; write dims[{}] = dim(min = {}, max = {})".format(
            where,
            path,
            lo,
            hi,
            repr(name),
            hi,
            lo,
        ))

def _walk(value):
    """Yields (node, path) for every node of a tagged input value, parents first."""
    out = []
    stack = [value]
    for _ in range(MAX_SPEC_VALUES):
        if not stack:
            break
        node, path = stack.pop()
        out.append((node, path))
        for kind in ("list", "tuple"):
            for i, item in enumerate(node.get(kind, [])):
                stack.append((item, "{}[{}]".format(path, i)))
        for entry in node.get("dict", []):
            stack.append((entry["value"], "{}[{}]".format(path, repr(entry["key"]))))
    return out

def _hint_name(where, path, hint):
    if hint == None or hint in HINTS:
        return hint
    near = [h for h in HINTS if type(hint) == "string" and (h == hint.upper() or h[:3] == hint.upper()[:3])]
    fail("{}{} {} is not a hint; use {} (load AUTO, DYNAMIC, STATIC from //rules:defs.bzl)".format(
        where,
        path,
        repr(hint),
        near[0] if near else "AUTO, DYNAMIC or STATIC",
    ))

def _axis_hints(where, path, t, spec_hint):
    """The hint of every axis: AUTO/DYNAMIC/STATIC for int sizes, None for dim expressions."""
    shape = t["shape"]
    rank = len(shape)
    raw = t.get("hint") or {}
    own = [None] * rank
    if "per_axis" in raw:
        if len(raw["per_axis"]) != rank:
            fail("{}{} has {} hints for a rank-{} shape {}; give one hint (or None) per axis, or a dict {{axis: hint}}".format(
                where,
                path,
                len(raw["per_axis"]),
                rank,
                shape,
            ))
        own = [_hint_name(where, path + " hint", h) for h in raw["per_axis"]]
    for axis, h in raw.get("by_axis", []):
        if not _is_int(axis) or axis < 0 or axis >= rank:
            fail("{}{} has a hint for axis {}, but its shape {} has rank {}; use axes 0..{}".format(
                where,
                path,
                repr(axis),
                shape,
                rank,
                rank - 1,
            ))
        own[axis] = _hint_name(where, path + " hint", h)
    whole = _hint_name(where, path + " hint", raw.get("all"))
    hints = []
    for axis, size in enumerate(shape):
        if type(size) == "string":
            if own[axis] != None:
                fail("{}{} axis {} is the dim {}; a hint applies to int sizes only, so drop it or write an int size".format(
                    where,
                    path,
                    axis,
                    repr(size),
                ))
            hints.append(None)
            continue
        hint = own[axis] or whole or spec_hint or "STATIC"
        if hint == "DYNAMIC" and size < 2:
            fail(("{}{} axis {} is DYNAMIC but traced at size {}, which torch.export specialises; " +
                  "write a size >= 2 in the shape, or use AUTO (may specialise) or STATIC").format(where, path, axis, size))
        hints.append(hint)
    return hints

def _parse_sizes(where, path, t, dims, uses):
    """Checks every size of tensor t; returns its parsed sizes: int or (name, a, b)."""
    if type(t["shape"]) != "list":
        fail("{}{} has shape {}; write a list such as [\"batch\", 3, 224, 224]".format(where, path, repr(t["shape"])))
    if t["dtype"] not in DTYPES:
        fail("{}{} has dtype {}; use one of {}".format(where, path, repr(t["dtype"]), ", ".join(DTYPES)))
    fill = t.get("fill")
    if fill != None:
        want = "bool" if t["dtype"] == "bool" else ("int" if "int" in t["dtype"] else "number")
        ok = type(fill) == "bool" if want == "bool" else (_is_int(fill) if want == "int" else type(fill) in ("int", "float"))
        if not ok:
            fail("{}{} has fill = {} for dtype {}; use a {} fill".format(where, path, repr(fill), t["dtype"], want))
    parsed = []
    for axis, size in enumerate(t["shape"]):
        at = "{} axis {}".format(path, axis)
        if _is_int(size):
            if size < 0:
                fail("{}{} is {}; a size is a non-negative int, a dim name, or an expression like \"2*dx\"".format(where, at, size))
            parsed.append(size)
            continue
        if type(size) != "string":
            fail("{}{} is {}; a size is a non-negative int, a dim name, or an expression like \"2*dx\"".format(where, at, repr(size)))
        e = parse_linear(size)
        if e.error:
            fail("{}{} = {} {}".format(where, at, repr(size), e.error))
        if e.name not in dims:
            fail(("{}{} names dim {}, which `dims` does not declare; add dims = {{{}: dim(min = ..., max = ...)}}" +
                  "{}").format(
                where,
                at,
                repr(e.name),
                repr(e.name),
                "" if not dims else " or use one of " + ", ".join(sorted(dims.keys())),
            ))
        uses.setdefault(e.name, []).append((e.a, e.b, at, size))
        parsed.append((e.name, e.a, e.b))
    return parsed

def _choose_example(where, name, d, uses):
    """The tracing size of a dim: in range, and never 0 or 1 in any input unless pinned."""
    path = "dims[{}]".format(repr(name))
    lo, hi, pinned = d.get("min"), d.get("max"), d.get("example")
    lowest = lo if lo != None else 0
    for a, b, at, text in uses:
        if a * lowest + b < 0:
            fail("{}{} = {} is negative when {} = {}; write dims[{}] = dim(min = {}{})".format(
                where,
                at,
                repr(text),
                name,
                lowest,
                repr(name),
                -(b // a),  # ceil(-b / a)
                "" if hi == None else ", max = {}".format(hi),
            ))
    if pinned != None:
        if pinned < lowest or (hi != None and pinned > hi):
            fail("{}{} has example = {} outside its range [{}, {}]; pick an example inside the range".format(
                where,
                path,
                pinned,
                lowest,
                "inf" if hi == None else hi,
            ))
        return pinned

    # The smallest size >= 2 (in every derived form as well) that the range allows.
    example = lowest if lowest > 2 else 2
    for a, b, _, _ in uses:
        need = -((b - 2) // a)  # ceil((2 - b) / a)
        if need > example:
            example = need
    if hi != None and example > hi:
        fail(("{}{} allows sizes up to {} only, so it cannot be traced at a size >= 2 in every input; " +
              "raise max, make the size static, or pin the tracing size with example = N").format(where, path, hi))
    return example

def check_spec(raw, where):
    """Validates the macro's tagged JSON and fills in every tracing size.

    Args:
      raw: the spec as shape_spec's macro encodes it (tagged JSON, decoded).
      where: "shape_spec //pkg:name: ", the start of every failure message.

    Returns:
      The spec in the format that exporter/core/shape_spec.py documents.
    """
    dims_raw = raw.get("dims", {})
    for name, d in dims_raw.items():
        _check_dim_fields(where, name, d)
    spec_hint = _hint_name(where, "hint", raw.get("hint"))  # "hint \"dynamic\" is not a hint"

    tensors = []  # (tensor dict, path, parsed sizes)
    uses = {}
    for entry in raw["inputs"]:
        if type(entry["name"]) != "string" or not entry["name"]:
            fail("{}inputs has key {}; keys are forward's parameter names (strings)".format(where, repr(entry["name"])))
        for node, path in _walk((entry["value"], "inputs[{}]".format(repr(entry["name"])))):
            if "tensor" in node:
                t = node["tensor"]
                tensors.append((t, path, _parse_sizes(where, path, t, dims_raw, uses)))

    dims = {}
    for name, d in dims_raw.items():
        if name not in uses:
            fail("{}dims[{}] is declared but no input uses it; use it in a tensor shape or remove it".format(where, repr(name)))
        dims[name] = {
            "min": d.get("min"),
            "max": d.get("max"),
            "example": _choose_example(where, name, d, uses[name]),
        }

    for t, path, parsed in tensors:
        t["hints"] = _axis_hints(where, path, t, spec_hint)
        t["example_shape"] = [
            size if _is_int(size) else size[1] * dims[size[0]]["example"] + size[2]
            for size in parsed
        ]
        t.pop("hint")
    return {"dims": dims, "inputs": raw["inputs"]}
