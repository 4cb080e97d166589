"""TOSA's hooks (backend_hooks/__init__.py): ExecuTorch's TOSAPartitioner and TOSAQuantizer for the
TOSA 1.0 profile the options name (FP, or INT for a quantized model), and why its partitioner
left operators on the CPU (arm.py)."""

from backend_hooks import arm


def partitioner(options):
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner

    arm.quantized_out_variants()
    return TOSAPartitioner(TosaCompileSpec("TOSA-1.0+" + options.profile))


def quantizer(settings):
    from executorch.backends.arm.quantizer import TOSAQuantizer
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec

    return TOSAQuantizer(TosaCompileSpec("TOSA-1.0+INT")).set_global(arm.quantization_config(settings))


recording = arm.fallback_recording
manifest_record = arm.fallback_record
