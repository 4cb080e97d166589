"""backend_hooks/arm_fallback.py: the partitioner's rejections, read from ExecuTorch's own reporter,
become the manifest's "cpu_fallback" in the order found (the zoo's transformer_ethos_u55 is the
real lowering: models/transformer:cpu_fallback_test)."""

import types

import torch
from executorch.exir.backend.utils import WhyNoPartitionReporter

from backend_hooks import arm_fallback


class _Net(torch.nn.Module):
    def forward(self, x, ids):
        return torch.sin(x) + x, ids * 2


def _nodes():
    graph = torch.fx.symbolic_trace(_Net()).graph
    return {n.name: n for n in graph.nodes}


def test_rejections_name_the_node_its_operator_and_the_reason_in_order():
    nodes, reporter = _nodes(), WhyNoPartitionReporter()
    reporter.report_reject(nodes["mul"], "Had torch.int64 input\n  which is not supported")
    reporter.report_reject(nodes["sin"], "Not supported in the INT profile")
    reporter.report_reject(nodes["mul"], "a second reason is not kept")
    reporter.report_reject(nodes["x"], "placeholders are left out")
    assert arm_fallback.rejections([reporter]) == [
        {"node": "mul", "operator": "mul", "reason": "Had torch.int64 input which is not supported"},
        {"node": "sin", "operator": "sin", "reason": "Not supported in the INT profile"},
    ]


def test_a_program_with_nothing_refused_keeps_its_manifest():
    assert arm_fallback.manifest_record([]) == {}
    assert arm_fallback.manifest_record([{"node": "a"}]) == {"cpu_fallback": [{"node": "a"}]}


def test_capture_keeps_every_reporter_the_partitioner_makes_and_puts_the_class_back():
    # A stand-in for executorch.backends.arm.tosa.partitioner, which imports Arm's packages.
    partitioner = types.SimpleNamespace(WhyNoPartitionReporter=WhyNoPartitionReporter)
    nodes, original = _nodes(), partitioner.WhyNoPartitionReporter
    with arm_fallback.capture(module=partitioner) as found:
        reporter = partitioner.WhyNoPartitionReporter()  # as TOSAPartitioner.partition makes it
        reporter.report_reject(nodes["sin"], "why")
    assert partitioner.WhyNoPartitionReporter is original
    assert found == [{"node": "sin", "operator": "sin", "reason": "why"}]
    with arm_fallback.capture(enabled=False, module=partitioner) as found:
        assert partitioner.WhyNoPartitionReporter is original
    assert found == []
