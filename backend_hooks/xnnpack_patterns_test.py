"""XNNPACK's pattern graphs are built only for a graph that holds their anchor, with the same
bytes (backend_hooks/xnnpack_patterns.py). Run in another_process's child: which patterns a lowering
asks for is counted there, whatever this process built before."""

import json

from exporter.tests import another_process

_LOWERINGS = """
import contextlib, hashlib, json, sys
import torch
from backend_hooks import xnnpack_patterns
from exporter.actions import lower
from exporter.core import patches

torch.manual_seed(0)

class Plain(torch.nn.Module):  # no bmm, no upsampling: neither family can match
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.linear(x))

class Attention(torch.nn.Module):  # q @ k^T, softmax, @ v: bmm, the SDPA family's anchor
    def forward(self, q, k, v):
        return torch.softmax(q @ k.transpose(1, 2) * 0.5, dim=-1) @ v

asked = {}

def counted(family):
    real = getattr(family.module, family.getter)
    def getter():
        asked[family.getter] = asked.get(family.getter, 0) + 1
        return real()
    return getter

def lowered(model, *inputs):
    asked.clear()
    with contextlib.ExitStack() as stack:
        for family in xnnpack_patterns.families():
            stack.enter_context(patches.replaced(family.module, family.getter, counted(family)))
        program = lower.lower(torch.export.export(model, inputs), ["xnnpack"])[0]
    return hashlib.sha256(program.buffer).hexdigest(), dict(asked)

plain = Plain().eval(), torch.randn(2, 8)
result = {"plain": lowered(*plain), "attention": lowered(Attention(), *(torch.randn(2, 4, 8) for _ in range(3)))}
xnnpack_patterns.built_only_when_needed = contextlib.nullcontext  # ExecuTorch's passes as they are
result["plain_unpatched"] = lowered(*plain)
result["anchors"] = {family.getter: [any(n.target == family.anchor for n in graph.graph.nodes)
                                     for graph in xnnpack_patterns.patterns(family)]
                     for family in xnnpack_patterns.families()}
print(json.dumps(result))
"""

another_process.register("xnnpack_patterns", _LOWERINGS)


def _result():
    return json.loads(another_process.result("xnnpack_patterns")["printed"])


def test_every_pattern_holds_its_family_s_anchor():
    """Else a graph without the anchor could still match, and skipping would change bytes: a new
    ExecuTorch with other patterns fails here, and families() needs its new anchor."""
    anchors = _result()["anchors"]
    assert sorted(anchors) == ["get_graphs", "get_graphs_dict"]
    assert all(len(held) >= 1 and all(held) for held in anchors.values()), anchors


def test_a_graph_without_an_anchor_asks_for_no_pattern_and_keeps_its_bytes():
    result = _result()
    digest, asked = result["plain"]
    assert asked == {}, asked
    unpatched_digest, unpatched_asked = result["plain_unpatched"]
    assert sorted(unpatched_asked) == ["get_graphs", "get_graphs_dict"]  # the passes really ran them
    assert digest == unpatched_digest


def test_a_graph_with_an_anchor_gets_its_family_s_patterns():
    _, asked = _result()["attention"]
    assert asked.get("get_graphs", 0) >= 1, asked  # SDPA's
    assert "get_graphs_dict" not in asked, asked  # no upsampling
