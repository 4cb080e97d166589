"""What the exporter's Python defines that the rules must agree with (generated from
exporter/facts.py by `bazel run //exporter:update_exporter_facts`; do not edit by hand;
//exporter:facts_test checks that it is current)."""

EXPORTER_ACTIONS = {
    "export": {
        "mnemonic": "TorchExport",
        "worker": True,
    },
    "lower": {
        "mnemonic": "ExecuTorchLower",
        "worker": True,
    },
    "etrecord": {
        "mnemonic": "ExecuTorchETRecord",
        "worker": True,
    },
    "bundle": {
        "mnemonic": "ModelBundle",
        "worker": False,
    },
    "calibrate": {
        "mnemonic": "CalibrationData",
        "worker": False,
    },
    "quantize": {
        "mnemonic": "TorchQuantize",
        "worker": True,
    },
    "bundled_program": {
        "mnemonic": "BundledProgram",
        "worker": False,
    },
    "selected_ops": {
        "mnemonic": "ExecuTorchSelectedOps",
        "worker": False,
    },
    "tokenizer": {
        "mnemonic": "TokenizerCheck",
        "worker": False,
    },
}

SHAPE_SPEC_DTYPES = [
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "bool",
]

HINTS = [
    "AUTO",
    "DYNAMIC",
    "STATIC",
]

BACKENDS = [
    "xnnpack",
]

IRS = [
    "training",
    "inference",
    "core_aten",
]

QUANTIZERS = [
    "xnnpack",
]

SCHEMES = {
    "int8_static_per_channel": True,
    "int8_static_per_tensor": True,
    "int8_dynamic_per_channel": False,
    "int4_dynamic_per_channel": False,
}

KERNEL_LIBRARIES = [
    "portable",
    "optimized",
    "quantized",
]

REPRODUCIBLE_MATH_ENV = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "AVX2,STRICT",
}
