"""Each backend's partitioner, built from its options (core/backends.py), and what the lowering
changes in a backend's own code while it runs, so that its bytes are what the options say and
the same on every run:

- OpenVINO: ExecuTorch's OpenvinoBackend passes compile specs to openvino_compile as strings, so
  no spec can carry OpenVINO's config; the lowering hands it the precision hint
  (INFERENCE_PRECISION_HINT) itself.
- Core ML: the delegate's model package gets the same bytes on every run (actions/coreml_package.py
  says what differed).
- XNNPACK: two of its passes build their pattern graphs only for a graph that could match one
  (actions/xnnpack_patterns.py); the bytes are the same, a one-shot lowering is faster.

Arm's backends lower through a TOSA 1.0 graph: TOSA's partitioner keeps it (profile FP or INT),
Ethos-U's compiles it with Vela for the NPU, which runs integer operators only.
"""

import contextlib
from collections.abc import Callable
from typing import Any

from exporter.actions import coreml_package, xnnpack_patterns
from exporter.core.backends import (
    BACKENDS,
    OPTION_CLASSES,
    BackendOptions,
    CoremlOptions,
    EthosUOptions,
    OpenvinoOptions,
    TosaOptions,
)
from exporter.core import patches
from exporter.core.errors import UserError


def _xnnpack(_options):
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    return XnnpackPartitioner()


def _openvino(options: OpenvinoOptions):
    from executorch.backends.openvino.partitioner import OpenvinoPartitioner
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    return OpenvinoPartitioner([CompileSpec("device", options.device.encode())])


def _coreml(options: CoremlOptions):
    import coremltools as ct
    from executorch.backends.apple.coreml.compiler import CoreMLBackend
    from executorch.backends.apple.coreml.partition import CoreMLPartitioner

    specs = CoreMLBackend.generate_compile_specs(
        compute_unit=ct.ComputeUnit[options.compute_units.upper()],
        minimum_deployment_target=ct.target[options.minimum_deployment_target],
        compute_precision=ct.precision.FLOAT16 if options.precision == "fp16" else ct.precision.FLOAT32,
    )
    return CoreMLPartitioner(compile_specs=specs)


def _quantized_out_variants():
    # An Arm program quantizes its inputs and dequantizes its outputs on the CPU, outside the
    # delegate: to_executorch needs those operators' out variants, which this import registers.
    import executorch.kernels.quantized  # noqa: F401


def _tosa(options: TosaOptions):
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner

    _quantized_out_variants()
    return TOSAPartitioner(TosaCompileSpec("TOSA-1.0+" + options.profile))


def ethos_u_compile_spec(options: EthosUOptions):
    """ExecuTorch's EthosUCompileSpec of the options; "default" leaves the choice to it."""
    from executorch.backends.arm.ethosu import EthosUCompileSpec

    return EthosUCompileSpec(
        options.target,
        system_config=None if options.system_config == "default" else options.system_config,
        memory_mode=None if options.memory_mode == "default" else options.memory_mode,
    )


def _ethos_u(options: EthosUOptions):
    from executorch.backends.arm.ethosu import EthosUPartitioner

    _quantized_out_variants()
    return EthosUPartitioner(ethos_u_compile_spec(options))


# Each takes its backend's options (None for XNNPACK, which has none).
_BUILDERS: dict[str, Callable[[Any], Any]] = {"xnnpack": _xnnpack, "openvino": _openvino, "coreml": _coreml,
                                              "tosa": _tosa, "ethos_u": _ethos_u}


def partitioners(backends, options: BackendOptions | None = None):
    """The partitioners of `backends` (names), each with its options (defaults where none)."""
    options = options or BackendOptions()
    found = []
    for backend in backends:
        if backend not in _BUILDERS:  # the rule checks backends at analysis; this guards CLI use
            raise UserError(f"unknown backend {backend!r}; `backends` takes {list(BACKENDS)} or []")
        own = getattr(options, backend, None)
        if own is None and backend in OPTION_CLASSES:
            own = OPTION_CLASSES[backend]()
        found.append(_BUILDERS[backend](own))
    return found


def _integer_only(backend, options: BackendOptions):
    """The quantizer a program lowered for `backend` needs, or None when it takes float: Ethos-U
    runs integer operators only, and so does TOSA's INT profile."""
    if backend == "ethos_u":
        return "ethos_u"
    if backend == "tosa" and (options.tosa or TosaOptions()).profile == "INT":
        return "tosa"
    return None


def _is_quantized(program):
    """Whether a PT2E quantization left its quantize/dequantize operators in the program."""
    return any(node.op == "call_function" and "quantized_decomposed" in str(node.target)
               for node in program.graph.nodes)


def check_quantized(programs, backends, options: BackendOptions | None, where):
    """Fails in one line when a float method is lowered for a backend that runs integers only:
    Ethos-U's partitioner would leave every operator on the CPU and say nothing (measured).

    programs: {method: ExportedProgram}; backends: {method: backend names}; where: a
    function of the method's name that gives the message's prefix (the program and its export).
    """
    for method, program in programs.items():
        for backend in backends[method]:
            quantizer = _integer_only(backend, options or BackendOptions())
            if quantizer and not _is_quantized(program):
                raise UserError(f"{where(method)} is not quantized, and {backend} runs integer operators only; "
                                f"quantize it with torch_quantize(quantizer = \"{quantizer}\") and lower that")


@contextlib.contextmanager
def backend_patches(backends, options: BackendOptions | None = None):
    """While a lowering for `backends` runs: OpenVINO's precision hint, Core ML's stable names,
    XNNPACK's pattern graphs built only when a graph could match them."""
    options = options or BackendOptions()
    with contextlib.ExitStack() as stack:
        if "xnnpack" in backends:
            stack.enter_context(xnnpack_patterns.built_only_when_needed())
        if "openvino" in backends:
            stack.enter_context(_openvino_config(options.openvino or OpenvinoOptions()))
        if "coreml" in backends:
            stack.enter_context(_coreml_names())
        yield


@contextlib.contextmanager
def _openvino_config(chosen: OpenvinoOptions):
    from executorch.backends.openvino import preprocess

    original = preprocess.openvino_compile
    precision = chosen.precision

    def compile_with_config(module, *args, options=None, **kwargs):
        given = dict(options or {})
        given["config"] = {"INFERENCE_PRECISION_HINT": precision}
        return original(module, *args, options=given, **kwargs)

    with patches.replaced(preprocess, "openvino_compile", compile_with_config):
        yield


@contextlib.contextmanager
def _coreml_names():
    from executorch.backends.apple.coreml.compiler import coreml_preprocess

    stable = coreml_package.StableFlattener(coreml_preprocess.executorchcoreml)
    with patches.replaced(coreml_preprocess, "executorchcoreml", stable):
        yield


def openvino_targets(data):
    """The CPU instruction sets OpenVINO compiled a program's blobs for, from their headers
    (`meta=1.0;ov=2026.4.1;isa=Intel AVX2`, after its length as 8 bytes, little-endian): the
    blob loads only on a CPU whose best instruction set is the same (docs/backends.md)."""
    found = []
    start = data.find(b"meta=")
    while start >= 8:
        size = int.from_bytes(data[start - 8:start], "little")
        text = data[start:start + size].decode("ascii", "replace") if size < 256 else ""
        fields = dict(part.split("=", 1) for part in text.split(";") if "=" in part)
        if "isa" in fields and fields["isa"] not in found:
            found.append(fields["isa"])
        start = data.find(b"meta=", start + 5)
    return found
