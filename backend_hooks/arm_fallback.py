"""Why Arm's partitioner left operators on the CPU (docs/backends.md, "Arm"), for the manifest.

ExecuTorch's TOSAPartitioner (and EthosUPartitioner, built on it) gives each operator it refuses
a reason through an `exir.backend.utils.WhyNoPartitionReporter` of its own, and only logs the
table. While a lowering runs, capture() puts a subclass in the partitioner module's place that
keeps every reporter, then manifest_record() reads their rejections: the node, its operator and
the partitioner's reason, in the order the partitioner found them. The record holds no address
or time, so it is the same on every run.
"""

import contextlib
from typing import Any


def _rejection(node, reason):
    target = getattr(node.target, "_op", None) or node.target  # an edge operator's ATen overload
    operator = str(target) if hasattr(target, "_schema") else getattr(target, "__name__", str(target))
    return {"node": node.name, "operator": operator, "reason": " ".join(str(reason).split())}


def rejections(reporters):
    """[{node, operator, reason}] over the reporters, placeholders and outputs left out."""
    found = []
    for reporter in reporters:
        for node, reason in reporter._rejected_nodes.items():  # noqa: SLF001 (ExecuTorch keeps no other record)
            if node.op not in ("placeholder", "output"):
                found.append(_rejection(node, reason))
    return found


def manifest_record(found):
    """The manifest's "cpu_fallback" entry, or {} when the partitioner refused nothing (the
    manifest then keeps its bytes)."""
    return {"cpu_fallback": list(found)} if found else {}


@contextlib.contextmanager
def capture(enabled=True, module=None):
    """While the block lowers: the partitioner's rejections, appended to the list it yields.
    module: the one that makes the reporters, Arm's partitioner module (tests give a stand-in)."""
    found: list = []
    if not enabled:
        yield found
        return
    if module is None:
        import importlib

        module = importlib.import_module("executorch.backends.arm.tosa.partitioner")

    original: Any = module.WhyNoPartitionReporter
    reporters = []

    class Kept(original):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            reporters.append(self)

    module.WhyNoPartitionReporter = Kept
    try:
        yield found
        found.extend(rejections(reporters))
    finally:
        module.WhyNoPartitionReporter = original
