"""Turns a shape spec (ShapeSpecInfo.spec, also the manifest's "shape_spec") into export inputs.

The spec's JSON form (shape_spec writes it; its analysis checks have run and filled in every
"example", "hints" and "example_shape"):

  {"dims": {"batch": {"min": 1, "max": 32, "example": 2}},      # min/max null = open
   "inputs": [                                                  # in the BUILD file's order
     {"name": "x", "value": NODE}, ...]}

  NODE is one of
    {"tensor": {"shape": ["batch", "2*batch", 3],   # int, dim name, or a*dim+b (a >= 1)
                "dtype": "float32",                 # see dtypes.SHAPE_SPEC
                "hints": [null, null, "STATIC"],    # per axis: AUTO/DYNAMIC/STATIC for int
                                                    # sizes, null for dim expressions
                "example_shape": [2, 4, 3],         # the sizes export traces with
                "fill": null}}                      # or a number/bool every element equals
    {"int": 3}  {"float": 0.5}  {"bool": true}  {"str": "mode"}  {"none": null}
    {"list": [NODE, ...]}  {"tuple": [NODE, ...]}
    {"dict": [{"key": "a" or 1, "value": NODE}, ...]}

A reader that wants other sizes than the example evaluates each shape entry with size_of().
"hints", "example_shape" and "fill" may be missing in hand-written specs: hints default to
STATIC, example shapes come from the dims' examples.
"""

import collections
import inspect
import json
import re

import torch

HINTS = ("AUTO", "DYNAMIC", "STATIC")

# Starlark has no recursion and no while: the analysis-time walks over a spec's nested inputs
# (rules/private/shape_spec.bzl and lib/shape_spec_check.bzl) take at most this many steps, so
# a spec holds fewer values than this in all. The exporter reads any spec that fits
# (shape_spec_test checks the largest).
MAX_VALUES = 100000

Linear = collections.namedtuple("Linear", "name a b")
Linear.__doc__ = "A size a*name + b, with a >= 1."

# What a derived size may contain; anything else never reaches sympy.
_EXPRESSION_CHARS = re.compile(r"^[A-Za-z0-9_+\-* ()]+$")


def parse_size(size, dim_names):
    """An int size stays an int; a string becomes a Linear, parsed and checked with sympy.

    Raises ValueError with a sentence that completes "<where> = '<size>' ...".
    """
    if isinstance(size, int) and not isinstance(size, bool):
        return size
    if not isinstance(size, str) or not _EXPRESSION_CHARS.match(size):
        raise ValueError("is not an int, a dim name, or a linear expression like \"2*dx\"")
    import sympy
    from sympy.parsing.sympy_parser import parse_expr, standard_transformations

    symbols = {name: sympy.Symbol(name, integer=True) for name in dim_names}
    try:
        expr = sympy.expand(parse_expr(size, local_dict=symbols, transformations=standard_transformations))
    except Exception:
        raise ValueError("is not a valid expression; write it like \"2*dx\" or \"dx+1\"") from None
    free = sorted(str(s) for s in expr.free_symbols)
    unknown = [s for s in free if s not in symbols]
    if unknown:
        raise ValueError(f"names dim {unknown[0]!r}, which `dims` does not declare")
    if len(free) != 1:
        raise ValueError("has no dim name; write the size as an int" if not free else
                         f"uses several dims ({', '.join(free)}); a derived size depends on one dim")
    symbol = symbols[free[0]]
    try:
        poly = sympy.Poly(expr, symbol)
    except sympy.PolynomialError:
        raise ValueError("is not linear in its dim; a derived size is a*dim+b") from None
    if poly.degree() != 1:
        raise ValueError(f"is non-linear (degree {poly.degree()}); a derived size is a*dim+b")
    a, b = poly.coeff_monomial(symbol), poly.coeff_monomial(1)
    if not (a.is_integer and b.is_integer) or a < 1:
        raise ValueError("needs a positive int coefficient and an int offset, like \"2*dx\" or \"dx+1\"")
    return Linear(free[0], int(a), int(b))


def format_linear(size):
    """The canonical spelling of a Linear: "dx", "2*dx", "dx+1", "4*dx-2"."""
    text = size.name if size.a == 1 else f"{size.a}*{size.name}"
    return text + (f"{size.b:+d}" if size.b else "")


def key_text(key):
    """A dict key or input name as a BUILD file spells it: "x" for strings, 1 for ints."""
    return json.dumps(key)


def size_of(size, dim_values):
    """The concrete size of one shape entry, given a value for every dim it may name."""
    parsed = parse_size(size, dim_values)
    if isinstance(parsed, int):
        return parsed
    return parsed.a * dim_values[parsed.name] + parsed.b


def walk_tensors(spec):
    """Yields (path, tensor node) for every tensor in the spec's inputs, in order."""
    stack = [(f"inputs[{key_text(e['name'])}]", e["value"]) for e in reversed(spec["inputs"])]
    while stack:
        path, node = stack.pop()
        kind, body = next(iter(node.items()))
        if kind == "tensor":
            yield path, body
        elif kind in ("list", "tuple"):
            stack.extend((f"{path}[{i}]", n) for i, n in reversed(list(enumerate(body))))
        elif kind == "dict":
            stack.extend((f"{path}[{key_text(e['key'])}]", e["value"]) for e in reversed(body))


def _leaves(node, path):
    """(path, tensor node or None) for each pytree leaf of a NODE, in torch's flatten order.

    Scalars, strings and None are leaves too (torch 2.13's pytree keeps None as a leaf).
    """
    kind, body = next(iter(node.items()))
    if kind == "tensor":
        return [(path, body)]
    if kind in ("list", "tuple"):
        return [leaf for i, item in enumerate(body) for leaf in _leaves(item, f"{path}[{i}]")]
    if kind == "dict":
        return [leaf for e in body for leaf in _leaves(e["value"], f"{path}[{key_text(e['key'])}]")]
    return [(path, None)]


def program_leaves(ep, spec):
    """The spec's leaves lined up with ep's user inputs, or None if they do not line up.

    torch.export flattens (args, kwargs): the positional parameters in forward's order, then
    the keywords in the order they were passed.
    """
    by_name = {e["name"]: e["value"] for e in (spec or {}).get("inputs", [])}
    in_spec = ep.call_spec.in_spec
    if in_spec is None:
        return None
    params = list(inspect.signature(ep.module().forward).parameters)
    names = params[:in_spec.child(0).num_children] + list(in_spec.child(1).context or [])
    if any(n not in by_name for n in names):
        return None
    leaves = [leaf for n in names for leaf in _leaves(by_name[n], f"inputs[{key_text(n)}]")]
    return leaves if len(leaves) == len(ep.graph_signature.user_inputs) else None


def call_arguments(ep, values, module=None):
    """(args, kwargs) for the program's signature: as many positionals as it was exported with.

    module: ep.module() (or a module with its signature), when the caller already has one.
    """
    params = list(inspect.signature((module or ep.module()).forward).parameters)
    in_spec = ep.call_spec.in_spec  # ((args...), {kwargs...})
    n_args, keywords = in_spec.child(0).num_children, list(in_spec.child(1).context or [])
    missing = [n for n in params[:n_args] + keywords if n not in values]
    if missing:
        raise ValueError(f"the program takes input {missing[0]!r}, which the shape_spec does not name")
    return tuple(values[n] for n in params[:n_args]), {k: values[k] for k in keywords}


def user_input_values(ep):
    """meta["val"] of each user input placeholder, in order (a FakeTensor, or the constant)."""
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    values = []
    for s in ep.graph_signature.input_specs:
        if s.kind.name == "USER_INPUT":
            node = nodes.get(getattr(s.arg, "name", None))
            values.append(node.meta.get("val") if node is not None else getattr(s.arg, "value", None))
    return values


def dim_uses(spec):
    """{dim name: [(input path, axis, size as written)]} for every shape entry naming a dim."""
    uses = collections.defaultdict(list)
    names = spec.get("dims", {})
    for path, tensor in walk_tensors(spec):
        for axis, size in enumerate(tensor["shape"]):
            parsed = parse_size(size, names)
            if isinstance(parsed, Linear):
                uses[parsed.name].append((path, axis, size))
    return dict(uses)


def example_tensor(shape, dtype_name, generator, fill=None):
    """A seeded example tensor: normal floats, small non-negative ints, random bools.

    Floats are drawn in float64 and rounded: torch's float32 normal sampler has a vectorised
    variant per instruction set whose values differ from the plain one's; the float64 sampler
    draws the same values on every CPU.
    """
    dtype = getattr(torch, dtype_name)
    if fill is not None:
        return torch.full(shape, fill, dtype=dtype)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=generator, dtype=torch.float64).to(dtype)
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


def _dim_example(spec, name):
    d = spec["dims"][name]
    if d.get("example") is not None:
        return d["example"]
    return max(d.get("min") or 0, 2)


def tensor_axes(tensor, spec):
    """[(parsed size, hint, example size)] for each axis of a tensor node."""
    names = spec.get("dims", {})
    parsed = [parse_size(s, names) for s in tensor["shape"]]
    hints = tensor.get("hints") or [None if isinstance(p, Linear) else "STATIC" for p in parsed]
    examples = tensor.get("example_shape") or [
        p if isinstance(p, int) else p.a * _dim_example(spec, p.name) + p.b for p in parsed
    ]
    return list(zip(parsed, hints, examples))


def _dynamic_entry(axes, dims):
    """A tensor's dynamic_shapes entry: {axis: Dim, derived Dim or hint}, or None if static."""
    entry = {}
    for axis, (parsed, hint, _) in enumerate(axes):
        if isinstance(parsed, Linear):
            d = dims[parsed.name]
            if parsed.a != 1:
                d = parsed.a * d
            entry[axis] = d + parsed.b if parsed.b else d
        elif hint in ("AUTO", "DYNAMIC"):
            entry[axis] = getattr(torch.export.Dim, hint)
    return entry or None


def build_value(node, spec, generator, path, tensors):
    """Builds one NODE's value; records every tensor as tensors[id(tensor)] = (path, node)."""
    kind, body = next(iter(node.items()))
    if kind == "tensor":
        axes = tensor_axes(body, spec)
        value = example_tensor([a[2] for a in axes], body["dtype"], generator, body.get("fill"))
        tensors[id(value)] = (path, body)
        return value
    if kind in ("int", "float", "bool", "str"):
        return body
    if kind == "none":
        return None
    if kind in ("list", "tuple"):
        items = [build_value(n, spec, generator, f"{path}[{i}]", tensors) for i, n in enumerate(body)]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {e["key"]: build_value(e["value"], spec, generator, f"{path}[{key_text(e['key'])}]", tensors)
                for e in body}
    raise ValueError(f"unknown input node {kind!r} at {path}")


def _dynamic_of(value, spec, dims, tensors, found):
    """The dynamic_shapes entry of an argument; appends to `found` for each dynamic tensor."""
    if isinstance(value, torch.Tensor):
        entry = _dynamic_entry(tensor_axes(tensors[id(value)][1], spec), dims)
        if entry is not None:
            found.append(entry)
        return entry
    if isinstance(value, (list, tuple)):
        return type(value)(_dynamic_of(v, spec, dims, tensors, found) for v in value)
    if isinstance(value, dict):
        return {k: _dynamic_of(v, spec, dims, tensors, found) for k, v in value.items()}
    return None


class Inputs:
    """What torch.export.export takes, plus where each example tensor came from."""

    def __init__(self, args, kwargs, dynamic_shapes, tensors):
        self.args, self.kwargs, self.dynamic_shapes, self.tensors = args, kwargs, dynamic_shapes, tensors


def _build_named(spec, generator, tensors):
    """{input name: its built value}, in the spec's order."""
    return {entry["name"]: build_value(entry["value"], spec, generator, f"inputs[{key_text(entry['name'])}]", tensors)
            for entry in spec["inputs"]}


def _check_names(built, params, var_keyword, spec_label):
    """Every input names a parameter of forward (or goes to its **kwargs), and every required
    parameter has an input."""
    from exporter.core.errors import UserError

    for name in built:
        if name == var_keyword:
            raise UserError(
                f"shape_spec {spec_label} names input {key_text(name)}, forward's **{name}; list its "
                f"entries as inputs of their own instead (inputs = {{\"key\": tensor([...])}})"
            )
        if name not in params and var_keyword is None:
            raise UserError(
                f"shape_spec {spec_label} names input {key_text(name)}, but forward takes "
                f"({', '.join(params)}); rename the key in `inputs` to one of those"
            )
    missing = [
        n for n, p in params.items()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        and n not in built
    ]
    if missing:
        raise UserError(
            f"forward needs input {key_text(missing[0])}, which shape_spec {spec_label} does not "
            f"declare; add it to `inputs`, e.g. inputs = {{{key_text(missing[0])}: tensor([...])}}"
        )


def _split_arguments(built, params, spec_label):
    """(args, kwargs) for forward: positional parameters in order up to the first one the spec
    leaves out, a *args parameter's list or tuple spread, the rest by name."""
    from exporter.core.errors import UserError

    built, args, positional_done = dict(built), [], False
    for name, p in params.items():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and not positional_done:
            if name in built:
                args.append(built.pop(name))
                continue
            positional_done = True
        if p.kind is p.VAR_POSITIONAL and name in built:
            value = built.pop(name)
            if positional_done or not isinstance(value, (list, tuple)):
                raise UserError(
                    f"shape_spec {spec_label}: inputs[{key_text(name)}] fills forward's *{name}, so it must be "
                    f"a list or tuple, and every positional parameter before it must be given"
                )
            args.extend(value)
    return args, built


def _dynamic_shapes(bound, spec, tensors, var_keyword, spec_label):
    """torch.export's dynamic_shapes for the bound arguments, or None when every size is static."""
    from exporter.core.errors import UserError

    dims = make_dims(spec)
    dynamic, found = {}, []
    for name, value in bound.items():
        dynamic[name] = _dynamic_of(value, spec, dims, tensors, found)
    if found and bound.get(var_keyword):
        raise UserError(
            f"shape_spec {spec_label}: forward's **{var_keyword} receives "
            f"{', '.join(key_text(k) for k in bound[var_keyword])}, and torch.export "
            f"{torch.__version__.split('+')[0]} cannot then export any dynamic size; make every "
            f"size static, or give forward a named parameter for each of those inputs"
        )
    return dynamic if found else None


def build_inputs(spec, forward, spec_label):
    """Matches the spec's inputs to forward's parameters by name; returns Inputs.

    Parameters that can be positional are passed positionally, in forward's order, up to the
    first one the spec leaves out; a *args parameter takes a list or tuple; names forward
    does not know go to its **kwargs.
    """
    tensors = {}
    built = _build_named(spec, torch.Generator().manual_seed(0), tensors)
    params = inspect.signature(forward).parameters
    var_keyword = next((n for n, p in params.items() if p.kind is p.VAR_KEYWORD), None)
    _check_names(built, params, var_keyword, spec_label)
    args, kwargs = _split_arguments(built, params, spec_label)
    bound = inspect.signature(forward).bind(*args, **kwargs).arguments
    return Inputs(tuple(args), kwargs, _dynamic_shapes(bound, spec, tensors, var_keyword, spec_label), tensors)
