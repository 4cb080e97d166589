"""The inputs of one test case at given dim sizes: seeded values built the way the exporter
builds its example inputs, for the actions that run a model (bundled_program, numerics_values)
and for numerics_test, which imports them from here (checks/ is not among the actions' tools).
torch is imported by the functions that build values, so that numerics_test, which only names
its cases, does not pay for it."""

import copy


def full_sizes(spec, sizes):
    """{dim: size} for every dim of the spec: `sizes`, and each other dim at its example."""
    full = {name: d.get("example") for name, d in sorted(spec.get("dims", {}).items())}
    full.update(sizes)
    return full


def cases(spec, ranges, extra):
    """[(case name, {dim: size})]: all dims at min, at example, at max, then the listed ones.
    ranges: the export's range_constraints (its manifest's), which may narrow the spec's."""
    dims = spec.get("dims", {})
    if not dims:
        return [("static shapes", {})]
    points = []
    for point in ("min", "example", "max"):
        sizes = {}
        for name, d in sorted(dims.items()):
            exported = ranges.get(name, {})
            value = d.get("example") if point == "example" else exported.get(point, d.get(point))
            sizes[name] = value if value is not None else d.get("example")
        points.append((f"{point} " + ", ".join(f"{k}={v}" for k, v in sizes.items()), sizes))
    for sizes in extra:
        full = full_sizes(spec, sizes)
        points.append(("listed " + ", ".join(f"{k}={v}" for k, v in sorted(full.items())), full))
    unique, seen = [], set()
    for name, sizes in points:
        key = tuple(sorted(sizes.items()))
        if key not in seen:
            seen.add(key)
            unique.append((name, sizes))
    return unique


def make_inputs(spec, sizes, seed=0):
    """{input name: value}: the spec's inputs, seeded, with each dim of `sizes` at its size."""
    import torch

    from exporter.core import shape_spec

    case = copy.deepcopy(spec)
    for name, size in sizes.items():
        case["dims"][name]["example"] = size
    for _, tensor in shape_spec.walk_tensors(case):
        tensor.pop("example_shape", None)  # shape_spec recomputes it from the new examples
    generator = torch.Generator().manual_seed(seed)
    return {e["name"]: shape_spec.build_value(e["value"], case, generator, e["name"], {}) for e in case["inputs"]}


def runtime_inputs(args, kwargs, n_inputs):
    """The flat list of values a method takes, in the program's input order.

    A program keeps a slot for every leaf, None included; a str is baked into the program and
    its slot takes None. Older programs that dropped non-tensor inputs take the tensors alone.
    """
    import torch

    leaves = torch.utils._pytree.tree_leaves((args, kwargs), is_leaf=lambda v: v is None)
    if len(leaves) != n_inputs:
        leaves = [v for v in leaves if isinstance(v, torch.Tensor)]
    return [v.clone() if isinstance(v, torch.Tensor) else None if isinstance(v, str) else v for v in leaves]
