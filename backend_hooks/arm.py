"""What Arm's two backends share (tosa.py, ethos_u.py): both lower through a TOSA 1.0 graph,
quantize with Arm's symmetric int8 config, keep their quantize and dequantize operators on the
CPU, and say why their partitioner left operators there (arm_fallback.py)."""

import contextlib

from backend_hooks import arm_fallback

# The key of recording()'s dict and of the manifest (arm_fallback.py): one capture serves both
# backends of a program that has both.
FALLBACK = "cpu_fallback"


def quantized_out_variants():
    """An Arm program quantizes its inputs and dequantizes its outputs on the CPU, outside the
    delegate: to_executorch needs those operators' out variants, which this import registers."""
    import executorch.kernels.quantized  # noqa: F401


def quantization_config(settings):
    """Arm's symmetric int8 config (weights -127..127, activations -128..127), static only: the
    NPU and TOSA's INT profile have no dynamic quantization."""
    from executorch.backends.arm.quantizer import get_symmetric_quantization_config

    return get_symmetric_quantization_config(is_per_channel=settings["is_per_channel"])


@contextlib.contextmanager
def fallback_recording(found):
    """While the block lowers: the partitioner's rejections, in found[FALLBACK] (once per program)."""
    if FALLBACK in found:
        yield
        return
    with arm_fallback.capture() as rejected:
        found[FALLBACK] = rejected
        yield


def fallback_record(found):
    return arm_fallback.manifest_record(found.get(FALLBACK, []))
