"""The float precision OpenVINO's runtime computes an OpenVINO program in on this machine, which
numerics_test's defaults follow (its record's precision_check).

ExecuTorch's OpenvinoBackend imports a program's blob with no configuration (ExecuTorch's
backends/openvino/runtime/OpenvinoBackend.cpp: `ov_core_import_model(core, blob, size, device)`),
so the CPU plugin's own default decides the precision, not the hint the lowering compiled with:
bf16 on a CPU with bf16 units (AVX-512 BF16 or AMX), f32 on others. Measured with OpenVINO
2025.4.1 on an AMD EPYC (Zen 4, AVX-512 BF16): a blob compiled with INFERENCE_PRECISION_HINT f32
has the bytes of one compiled without it, and imports as bf16 (openvino_precision_test).
"""


def runtime_precision(device="CPU"):
    """"f32", "bf16" or "f16": what OpenVINO's plugin for device computes a float program in here,
    when nothing configures it. OpenVINO's packages must be on the path (core/backend_site.py)."""
    import openvino

    return openvino.Core().get_property(device, "INFERENCE_PRECISION_HINT").to_string()
