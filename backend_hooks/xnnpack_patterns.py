"""XNNPACK's pattern graphs, built only for a graph that could match one of them.

Two of XNNPACK's passes match each partition against pattern graphs that ExecuTorch builds with
torch.export and to_edge on first use: ConvertToUpsampleBilinear2d (four patterns) and
ConvertToSDPAPass (two). In a fresh process that took about 3.5 s of CPU per family, so a
one-shot lowering (remote, or --config=noworker) of a model with neither paid for patterns its
graph could not match: MobileNetV2's took 19 to 23 s of CPU, and 15.6 s without them
(docs/performance.md, 2026-11-28).

A match maps every node of a pattern onto a node of the graph with the same target, so a graph
without a family's ANCHOR matches none of its patterns: then the pass runs with no pattern,
which is what it would have found, and the bytes stay the same. A worker builds them all in its
warm-up (warm_up), so its children, forked after it, skip nothing they need.
"""

import contextlib
import dataclasses
from typing import Any

from exporter.core import patches


@dataclasses.dataclass(frozen=True)
class Family:
    pass_class: type  # the XNNPACK pass that matches the family's patterns
    module: Any  # the module whose getter builds (and caches) the patterns
    getter: str
    nothing: Any  # what the getter returns with no pattern ({} or [])
    anchor: Any  # the edge operator every pattern of the family holds


def families():
    """The two families, as ExecuTorch's XNNPACK backend names them."""
    from executorch.backends.xnnpack._passes import convert_to_sdpa, convert_to_upsample_bilinear2d
    from executorch.backends.xnnpack.partition.graphs import bilinear_2d, sdpa
    from executorch.exir.dialects._ops import ops as exir_ops

    return (
        Family(convert_to_upsample_bilinear2d.ConvertToUpsampleBilinear2d, bilinear_2d, "get_graphs_dict", {},
               exir_ops.edge.aten.upsample_bilinear2d.vec),
        Family(convert_to_sdpa.ConvertToSDPAPass, sdpa, "get_graphs", [], exir_ops.edge.aten.bmm.default),
    )


def patterns(family):
    """The family's pattern graphs (built on the first call)."""
    return list(getattr(family.module, family.getter)())


def _holds(graph_module, target):
    return any(node.op == "call_function" and node.target == target for node in graph_module.graph.nodes)


def _call_building_only_when_needed(family, original):
    def call(pass_self, graph_module):
        if _holds(graph_module, family.anchor):
            return original(pass_self, graph_module)
        with patches.replaced(family.module, family.getter, lambda: family.nothing):
            return original(pass_self, graph_module)

    return call


@contextlib.contextmanager
def built_only_when_needed():
    """While an XNNPACK lowering runs: each family's patterns are built only for a graph that
    holds its anchor."""
    with contextlib.ExitStack() as stack:
        for family in families():
            call = _call_building_only_when_needed(family, family.pass_class.call)
            stack.enter_context(patches.replaced(family.pass_class, "call", call))
        yield


def warm_up():
    """Builds every family's patterns, for the children a worker forks afterwards."""
    for family in families():
        patterns(family)
