"""What export made of every size the spec asked to be dynamic: its final range, or a constant."""

import sympy
import torch
from torch.export.graph_signature import InputKind
from torch.utils import _pytree as pytree
from torch.utils._sympy.numbers import int_oo
from torch.utils._sympy.value_ranges import bound_sympy

from exporter.core import shape_spec


def bound(value):
    """An int bound, or None for an open end (torch's int_oo; sympy calls it finite)."""
    if value in (int_oo, -int_oo, sympy.oo, -sympy.oo):
        return None
    return int(value)


def _requested(parsed, hint):
    """How the spec asked for this axis: a dim expression, AUTO, DYNAMIC, or None (static)."""
    if isinstance(parsed, shape_spec.Linear):
        return shape_spec.format_linear(parsed)
    return hint if hint in ("AUTO", "DYNAMIC") else None


def _user_axes(ep, inputs, spec):
    """Yields (input path, axis, parsed size, hint, exported size) for every dynamic request."""
    by_name = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    placeholders = [
        by_name[s.arg.name] for s in ep.graph_signature.input_specs
        if s.kind == InputKind.USER_INPUT
    ]
    leaves = pytree.tree_leaves((inputs.args, inputs.kwargs))
    if len(placeholders) != len(leaves):
        raise AssertionError(f"{len(placeholders)} user inputs in the graph, {len(leaves)} in the spec")
    for leaf, node in zip(leaves, placeholders):
        if not isinstance(leaf, torch.Tensor) or id(leaf) not in inputs.tensors:
            continue
        path, tensor = inputs.tensors[id(leaf)]
        shape = node.meta["val"].shape
        for axis, (parsed, hint, _) in enumerate(shape_spec.tensor_axes(tensor, spec)):
            if _requested(parsed, hint):
                yield path, axis, parsed, hint, shape[axis]


def _symbol_names(axes):
    """Readable names for the graph's shape symbols: dim names first, then input[axis]."""
    names = {}
    for _, _, parsed, _, size in axes:
        if isinstance(size, torch.SymInt) and isinstance(parsed, shape_spec.Linear):
            free = size.node.expr.free_symbols
            if len(free) == 1:
                names.setdefault(next(iter(free)), sympy.Symbol(parsed.name))
    for path, axis, _, _, size in axes:
        if isinstance(size, torch.SymInt) and isinstance(size.node.expr, sympy.Symbol):
            names.setdefault(size.node.expr, sympy.Symbol(f"{path}.shape[{axis}]"))
    return names


def report(ep, inputs, spec):
    """Returns (dims, range_constraints, specialised).

    dims: one record per requested-dynamic axis, in input order:
      {"input", "axis", "requested", "expr", "min", "max"} or, when export made it a
      constant, {"input", "axis", "requested", "specialised": N}.
    range_constraints: {dim name: {"min", "max"}} for the named dims that stayed dynamic.
    specialised: the records that specialised (AUTO may; named dims and DYNAMIC may not).
    """
    axes = list(_user_axes(ep, inputs, spec))
    names = _symbol_names(axes)
    records, ranges, specialised = [], {}, []
    for path, axis, parsed, hint, size in axes:
        record = {"input": path, "axis": axis, "requested": _requested(parsed, hint)}
        if isinstance(size, torch.SymInt) and not size.node.expr.is_number:
            expr = size.node.expr
            vr = bound_sympy(expr, ep.range_constraints)
            record.update(expr=str(expr.xreplace(names)), min=bound(vr.lower), max=bound(vr.upper))
            if isinstance(parsed, shape_spec.Linear) and parsed.name not in ranges:
                root = [s for s in expr.free_symbols if names.get(s) == sympy.Symbol(parsed.name)]
                if root:
                    root_vr = bound_sympy(root[0], ep.range_constraints)
                    ranges[parsed.name] = {"min": bound(root_vr.lower), "max": bound(root_vr.upper)}
        else:
            record["specialised"] = int(size.node.expr if isinstance(size, torch.SymInt) else size)
            specialised.append(record)
        records.append(record)
    return records, dict(sorted(ranges.items())), specialised
