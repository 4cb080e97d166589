"""Explains a graph snapshot that differs from its golden only in quantization parameters.

Calibration chooses each activation's scale and zero point. When those are all that moved, the
graph test says so and names the first layer whose parameters moved and by how much, instead
of leaving the reader to find one changed float in a long diff.
"""

import re

# %quantize_per_tensor_3 = quantized_decomposed.quantize_per_tensor.default(%conv2d_1, 0.04, -3, ...
_NODE = re.compile(r"^(%\S+) = quantized_decomposed\.(?:de)?quantize_per_tensor\.\w+\((%[^,]+), ([^,]+), ([^,]+),(.*)$")


def _parse(line):
    """(node, input, scale, zero point, the line with both masked), or None for other lines."""
    match = _NODE.match(line)
    if not match:
        return None
    node, source, scale, zero_point, rest = match.groups()
    try:
        return node, source, float(scale), int(zero_point), f"{node} = ({source}, ?, ?,{rest}"
    except ValueError:  # a scale or zero point computed in the graph, not a constant
        return None


def explain(golden_text, actual_text):
    """One paragraph when only quantization parameters differ, else None."""
    golden, actual = golden_text.splitlines(), actual_text.splitlines()
    if len(golden) != len(actual):
        return None
    moved = []
    for old, new in zip(golden, actual):
        if old == new:
            continue
        before, after = _parse(old), _parse(new)
        if before is None or after is None or before[4] != after[4]:
            return None
        moved.append((before, after))
    if not moved:
        return None
    (node, source, scale, zero_point, _), (_, _, new_scale, new_zero_point, _) = moved[0]
    total = sum(1 for line in actual if _parse(line))
    change = (new_scale - scale) / scale if scale else float("inf")
    return (
        f"Only quantization parameters differ: {len(moved)} of {total} quantize/dequantize nodes "
        f"moved. The first is {node}, on the output of {source}: scale {scale!r} -> {new_scale!r} "
        f"({change:+.2e} relative), zero point {zero_point} -> {new_zero_point}. Calibration "
        f"chose them; if the golden comes from another machine, see docs/caching.md (\"Across machines\")."
    )
