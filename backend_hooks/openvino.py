"""OpenVINO's hooks (backend_hooks/__init__.py).

ExecuTorch's OpenvinoBackend passes compile specs to openvino_compile as strings, so no spec can
carry OpenVINO's config: while a lowering runs, patches() hands it the precision hint
(INFERENCE_PRECISION_HINT) itself. Its blobs are compiled for the lowering CPU's best instruction
set (per_machine_record reads which). Its packages (openvino, nncf) come from the backend's own
lock; ExecuTorch's runtimes find OpenVINO's C library through the record's runtime_library.
"""

import contextlib

from exporter.core import patches as attribute_patches


def partitioner(options):
    from executorch.backends.openvino.partitioner import OpenvinoPartitioner
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    return OpenvinoPartitioner([CompileSpec("device", options.device.encode())])


@contextlib.contextmanager
def patches(options):
    from executorch.backends.openvino import preprocess

    original = preprocess.openvino_compile
    precision = options.precision

    def compile_with_config(module, *args, options=None, **kwargs):
        given = dict(options or {})
        given["config"] = {"INFERENCE_PRECISION_HINT": precision}
        return original(module, *args, options=given, **kwargs)

    with attribute_patches.replaced(preprocess, "openvino_compile", compile_with_config):
        yield


def quantizer(_settings):
    """OpenVINO's own PT2E quantizer (nncf underneath, from the backend's repository): INT8_SYM is
    per-channel symmetric int8 weights and calibrated per-tensor activations. Its weights get 7
    bits (-64..63), NNCF's overflow fix, which ExecuTorch's quantizer drops: on a CPU without
    VNNI, OpenVINO's int8 kernels sum u8 x s8 pairs in int16 and saturate (measured on the conv +
    linear model, AVX2: 14.7 dB against float with 8-bit weights, 35 dB with 7)."""
    import dataclasses

    from executorch.backends.openvino.quantizer import OpenVINOQuantizer, QuantizationMode

    class SevenBitWeights(OpenVINOQuantizer):
        @staticmethod
        def _get_torch_ao_qspec_from_nncf_config_for_ptq(qp):
            spec = OpenVINOQuantizer._get_torch_ao_qspec_from_nncf_config_for_ptq(qp)
            if not qp.is_weight_quantization_point():
                return spec
            return dataclasses.replace(spec, quant_min=-64, quant_max=63)

    return SevenBitWeights(mode=QuantizationMode.INT8_SYM)


def per_machine_record(pte):
    """{"compiled_for": the CPU instruction sets OpenVINO compiled the program's blobs for}, from
    their headers (`meta=1.0;ov=2026.4.1;isa=Intel AVX2`, after its length as 8 bytes,
    little-endian): a blob loads only on a CPU whose best instruction set is the same
    (docs/backends.md)."""
    found = []
    start = pte.find(b"meta=")
    while start >= 8:
        size = int.from_bytes(pte[start - 8:start], "little")
        text = pte[start:start + size].decode("ascii", "replace") if size < 256 else ""
        fields = dict(part.split("=", 1) for part in text.split(";") if "=" in part)
        if "isa" in fields and fields["isa"] not in found:
            found.append(fields["isa"])
        start = pte.find(b"meta=", start + 5)
    return {"compiled_for": found}
