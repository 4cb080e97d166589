"""XNNPACK's hooks (backend_hooks/__init__.py): ExecuTorch's XnnpackPartitioner and XNNPACKQuantizer,
and its pattern graphs built only for a graph that could match one (xnnpack_patterns.py: the
bytes are the same, a one-shot lowering is faster)."""

from backend_hooks import xnnpack_patterns


def partitioner(_options):
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    return XnnpackPartitioner()


def quantizer(settings):
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )

    return XNNPACKQuantizer().set_global(get_symmetric_quantization_config(**settings))


def patches(_options):
    return xnnpack_patterns.built_only_when_needed()


def warm_up():
    """The pattern graphs, which a warm lowering need not build (xnnpack_patterns.py)."""
    xnnpack_patterns.warm_up()
