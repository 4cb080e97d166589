"""torch's size symbols named after the shape_spec's dims: `s77` is `batch` where the spec says so.

Graph snapshots (checks/snapshot.py) and reports (actions/program_graph.py) print sizes with
these names, so that a reader sees the dims of the BUILD file, not torch's numbering.
"""

import sympy
import torch

from exporter.core import shape_spec


def symbol_names(ep, spec):
    """Maps each input-size symbol to its shape_spec dim name, where the spec names one."""
    if not spec or not spec.get("dims"):
        return {}
    leaves = shape_spec.program_leaves(ep, spec)
    if leaves is None:
        return {}
    names = {}
    for (_, leaf), val in zip(leaves, shape_spec.user_input_values(ep)):
        if leaf is None or not isinstance(val, torch.Tensor):
            continue
        for size, written in zip(val.shape, leaf["shape"]):
            parsed = shape_spec.parse_size(written, spec["dims"])
            if not isinstance(parsed, shape_spec.Linear) or not isinstance(size, torch.SymInt):
                continue
            expr = size.node.expr  # "2*seq+1" was exported as 2*s3 + 1: s3 is seq
            if len(expr.free_symbols) == 1:
                sym = next(iter(expr.free_symbols))
                if sympy.simplify(expr - (parsed.a * sym + parsed.b)) == 0:
                    names.setdefault(sym, parsed.name)
    return names
