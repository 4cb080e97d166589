"""Core ML's hooks (backend_hooks/__init__.py): ExecuTorch's CoreMLPartitioner with coremltools'
compute units, precision and deployment target, and the delegate's model package made the same
bytes on every run (coreml_package.py says what differed)."""

import contextlib

from backend_hooks import coreml_package
from exporter.core import patches as attribute_patches


def partitioner(options):
    import coremltools as ct
    from executorch.backends.apple.coreml.compiler import CoreMLBackend
    from executorch.backends.apple.coreml.partition import CoreMLPartitioner

    specs = CoreMLBackend.generate_compile_specs(
        compute_unit=ct.ComputeUnit[options.compute_units.upper()],
        minimum_deployment_target=ct.target[options.minimum_deployment_target],
        compute_precision=ct.precision.FLOAT16 if options.precision == "fp16" else ct.precision.FLOAT32,
    )
    return CoreMLPartitioner(compile_specs=specs)


@contextlib.contextmanager
def patches(_options):
    from executorch.backends.apple.coreml.compiler import coreml_preprocess

    stable = coreml_package.StableFlattener(coreml_preprocess.executorchcoreml)
    with attribute_patches.replaced(coreml_preprocess, "executorchcoreml", stable):
        yield
