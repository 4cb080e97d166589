"""What the exporter's Python defines that the rules use (generated from
exporter/facts.py by `bazel run //exporter:update_exporter_facts`; do not edit by hand;
//exporter:facts_test checks that it is current)."""

EXPORTER_ACTIONS = {
    "export": {
        "mnemonic": "TorchExport",
        "worker": "export",
        "remote": True,
    },
    "lower": {
        "mnemonic": "ExecuTorchLower",
        "worker": "lower",
        "remote": True,
    },
    "etrecord": {
        "mnemonic": "ExecuTorchETRecord",
        "worker": "lower",
        "remote": True,
    },
    "bundle": {
        "mnemonic": "ModelBundle",
        "worker": "",
        "remote": True,
    },
    "calibrate": {
        "mnemonic": "CalibrationData",
        "worker": "export",
        "remote": True,
    },
    "quantize": {
        "mnemonic": "TorchQuantize",
        "worker": "export",
        "remote": True,
    },
    "bundled_program": {
        "mnemonic": "BundledProgram",
        "worker": "",
        "remote": True,
    },
    "selected_ops": {
        "mnemonic": "ExecuTorchSelectedOps",
        "worker": "",
        "remote": True,
    },
    "tokenizer": {
        "mnemonic": "TokenizerCheck",
        "worker": "",
        "remote": True,
    },
    "instructions": {
        "mnemonic": "InstructionCount",
        "worker": "",
        "remote": False,
    },
    "foundation": {
        "mnemonic": "FoundationWeights",
        "worker": "",
        "remote": True,
    },
    "report": {
        "mnemonic": "ProgramReport",
        "worker": "",
        "remote": False,
    },
    "dashboard": {
        "mnemonic": "ProgramDashboard",
        "worker": "",
        "remote": True,
    },
    "snapshot_text": {
        "mnemonic": "GraphSnapshot",
        "worker": "export",
        "remote": True,
    },
    "numerics_values": {
        "mnemonic": "NumericsValues",
        "worker": "export",
        "remote": True,
    },
}

EXPORTER_WORKER_REQUIREMENTS = {
    "supports-multiplex-workers": "1",
    "supports-workers": "1",
}

REPORT_ACTIONS = [
    "report",
    "dashboard",
]

CONFIG_DEFAULTS = {
    "export": {
        "strict": False,
        "ir": "training",
        "decompose": [],
        "keep": [],
        "quantize": "",
        "group_size": 32,
        "embedding_quantize": "",
        "llm_ops": [],
    },
    "lower": {
        "backends": [
            "xnnpack",
        ],
        "metadata": {},
        "weights": "inline",
        "initialized_buffers": None,
        "kernels": [
            {
                "name": "portable",
            },
        ],
        "method_backends": None,
        "llm": None,
        "multimodal": None,
        "foundation": None,
        "backend_options": None,
        "backend_packages": [],
        "release": None,
    },
    "etrecord": {
        "backends": [
            "xnnpack",
        ],
        "metadata": {},
        "weights": "inline",
        "initialized_buffers": None,
        "kernels": [
            {
                "name": "portable",
            },
        ],
        "method_backends": None,
        "llm": None,
        "multimodal": None,
        "foundation": None,
        "backend_options": None,
        "backend_packages": [],
        "release": None,
    },
    "bundle": {},
    "calibrate": {
        "files": [],
        "entry": "",
        "init_args": {},
        "import_roots": [
            ".",
        ],
        "srcs": [],
    },
    "quantize": {
        "strict": False,
        "quantizer": "xnnpack",
        "scheme": "int8_static_per_channel",
        "calibration": None,
        "backend_packages": [],
    },
    "bundled_program": {
        "reference": "eager",
        "model": None,
    },
    "selected_ops": {
        "lists": [],
    },
    "tokenizer": {
        "bos_id": None,
        "eos_ids": [],
        "tokenizer_config": None,
    },
    "instructions": {
        "ptd": None,
    },
    "foundation": {},
    "report": {
        "ptd": None,
        "exports": {},
        "selected_operators": None,
        "kernels": [],
        "etdump": None,
        "etdump_method": "forward",
    },
    "dashboard": {
        "summaries": [],
        "budgets": [],
        "numerics": [],
        "instructions": [],
    },
    "snapshot_text": {
        "pte": None,
        "spec": None,
    },
    "numerics_values": {
        "ptd": None,
        "method": "forward",
        "exported_label": None,
        "pt2": None,
        "pt2_manifest": None,
        "spec": None,
        "reference": "eager",
        "reference_program": None,
        "calibration": None,
        "inputs": [],
        "arm64_inputs": [],
        "steps": [],
        "runtimes": [
            "python",
        ],
        "backend_packages": [],
        "runtime_python": None,
        "model": None,
        "method_programs": {},
    },
}

EXPORTER_MODULES = {
    "benchmark": "exporter.checks.benchmark",
    "budget": "exporter.checks.budget",
    "delegate_structure": "exporter.checks.delegate_structure",
    "bundled_cases": "exporter.checks.bundled_cases",
    "generation": "exporter.checks.generation",
    "golden": "exporter.checks.golden",
    "multimodal_generation": "exporter.checks.multimodal_generation",
    "numerics": "exporter.checks.numerics",
    "profile": "exporter.checks.profile",
    "pte_inspect": "exporter.formats.pte_inspect",
    "seq2seq": "exporter.checks.seq2seq",
    "shared_budget": "exporter.checks.shared_budget",
    "steps": "exporter.checks.steps",
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

MAX_SPEC_VALUES = 100000

BACKENDS = [
    "xnnpack",
    "openvino",
    "coreml",
    "tosa",
    "ethos_u",
]

BACKEND_OPTIONS = {
    "xnnpack": {},
    "openvino": {
        "device": [
            "CPU",
            "GPU",
            "NPU",
        ],
        "precision": [
            "f32",
            "bf16",
            "f16",
        ],
    },
    "coreml": {
        "compute_units": [
            "all",
            "cpu_only",
            "cpu_and_gpu",
            "cpu_and_ne",
        ],
        "precision": [
            "fp16",
            "fp32",
        ],
        "minimum_deployment_target": [
            "iOS17",
            "iOS15",
            "iOS16",
            "iOS18",
            "iOS26",
        ],
    },
    "tosa": {
        "profile": [
            "FP",
            "INT",
        ],
    },
    "ethos_u": {
        "target": [
            "ethos-u55-128",
            "ethos-u55-32",
            "ethos-u55-64",
            "ethos-u55-256",
            "ethos-u85-128",
            "ethos-u85-256",
            "ethos-u85-512",
            "ethos-u85-1024",
            "ethos-u85-2048",
        ],
        "system_config": [
            "default",
            "Ethos_U55_High_End_Embedded",
            "Ethos_U55_Deep_Embedded",
            "Ethos_U85_SYS_DRAM_Low",
            "Ethos_U85_SYS_DRAM_Mid",
            "Ethos_U85_SYS_DRAM_High",
            "Ethos_U85_SYS_Flash_Low",
            "Ethos_U85_SYS_Flash_High",
        ],
        "memory_mode": [
            "default",
            "Shared_Sram",
            "Sram_Only",
            "Dedicated_Sram",
            "Dedicated_Sram_256KB",
            "Dedicated_Sram_384KB",
            "Dedicated_Sram_512KB",
        ],
    },
}

BACKEND_RECORDS = {
    "xnnpack": {
        "title": "XNNPACK",
        "delegate_id": "XnnpackBackend",
        "lock": None,
        "runtimes": [
            "python",
            "native",
            "arm64",
        ],
        "reference_runtimes": [],
        "runs_on": None,
        "per_machine": False,
        "weights_in_blob": False,
        "static_shapes": False,
        "integer_only": False,
        "quantizer": {
            "binds": False,
        },
        "outputs": {},
        "structure_check": False,
        "vela_figures": False,
    },
    "openvino": {
        "title": "OpenVINO",
        "delegate_id": "OpenvinoBackend",
        "lock": "openvino",
        "runtimes": [
            "python",
            "native",
        ],
        "reference_runtimes": [],
        "runs_on": None,
        "per_machine": True,
        "weights_in_blob": True,
        "static_shapes": True,
        "integer_only": False,
        "quantizer": {
            "binds": True,
        },
        "outputs": {},
        "structure_check": False,
        "vela_figures": False,
    },
    "coreml": {
        "title": "Core ML",
        "delegate_id": "CoreMLBackend",
        "lock": None,
        "runtimes": [],
        "reference_runtimes": [],
        "runs_on": [
            "Apple hardware",
            "a Mac or an iPhone",
        ],
        "per_machine": False,
        "weights_in_blob": True,
        "static_shapes": False,
        "integer_only": False,
        "quantizer": None,
        "outputs": {},
        "structure_check": True,
        "vela_figures": False,
    },
    "tosa": {
        "title": "TOSA",
        "delegate_id": "TOSABackend",
        "lock": "arm",
        "runtimes": [],
        "reference_runtimes": [
            "tosa_reference",
        ],
        "runs_on": [
            "a TOSA device",
            "a TOSA device",
        ],
        "per_machine": False,
        "weights_in_blob": True,
        "static_shapes": True,
        "integer_only": {
            "profile": "INT",
        },
        "quantizer": {
            "binds": True,
        },
        "outputs": {},
        "structure_check": False,
        "vela_figures": False,
    },
    "ethos_u": {
        "title": "Ethos-U",
        "delegate_id": "EthosUBackend",
        "lock": "arm",
        "runtimes": [],
        "reference_runtimes": [
            "tosa_reference",
            "fvp",
        ],
        "runs_on": [
            "an Ethos-U NPU",
            "a board or Arm's Corstone FVP",
        ],
        "per_machine": False,
        "weights_in_blob": True,
        "static_shapes": True,
        "integer_only": True,
        "quantizer": {
            "binds": True,
        },
        "outputs": {
            "vela": ".vela.json",
            "vela_tosa": ".vela_tosa.json",
        },
        "structure_check": False,
        "vela_figures": True,
    },
}

REFERENCE_RUNTIMES = {
    "tosa_reference": {
        "title": "the TOSA reference model",
        "runs": "a TOSA program's graph",
        "team_runner": False,
        "program_files": [
            "vela_tosa",
        ],
    },
    "fvp": {
        "title": "Arm's Corstone FVP",
        "runs": "an Ethos-U program on Arm's Corstone FVP",
        "team_runner": True,
        "program_files": [],
    },
}

PORTABLE_RUNTIMES = [
    "python",
    "native",
    "arm64",
]

QUANTIZERS = [
    "xnnpack",
    "openvino",
    "tosa",
    "ethos_u",
]

QUANTIZER_SCHEMES = {
    "xnnpack": [
        "int8_static_per_channel",
        "int8_static_per_tensor",
        "int8_dynamic_per_channel",
        "int4_dynamic_per_channel",
    ],
    "openvino": [
        "int8_static_per_channel",
    ],
    "tosa": [
        "int8_static_per_channel",
        "int8_static_per_tensor",
    ],
    "ethos_u": [
        "int8_static_per_channel",
        "int8_static_per_tensor",
    ],
}

RELEASES = {
    "1.3": {
        "version": "1.3.1",
        "lock": "executorch_1_3",
        "native": "python_binding",
        "arm64": True,
        "why_no_arm64": "",
        "runtime_lock": "executorch_1_3_runtime",
        "loaded_by": "1.3",
    },
    "1.4": {
        "version": "1.4.1",
        "lock": "executorch_1_4",
        "native": "python_binding",
        "arm64": True,
        "why_no_arm64": "",
        "runtime_lock": None,
        "loaded_by": "1.3",
    },
    "1.5": {
        "version": "1.5.1",
        "lock": None,
        "native": "libraries",
        "arm64": True,
        "why_no_arm64": "",
        "runtime_lock": None,
        "loaded_by": "1.3",
    },
}

DEFAULT_RELEASE = "1.5"

IRS = [
    "training",
    "inference",
    "core_aten",
]

EAGER_QUANTIZE_SCHEMES = [
    "8da4w",
    "8da8w",
]

LLM_OPS = [
    "sdpa",
    "kv_cache",
]

SCHEMES = {
    "int8_static_per_channel": True,
    "int8_static_per_tensor": True,
    "int8_dynamic_per_channel": False,
    "int4_dynamic_per_channel": False,
}

WEIGHTS = [
    "inline",
    "external",
]

TOKENIZER_FORMATS = [
    "huggingface",
    "sentencepiece",
    "tiktoken",
    "llama2c",
]

BUNDLED_REFERENCES = [
    "eager",
    "exported",
]

NUMERICS_REFERENCES = [
    "eager",
    "exported",
    "program",
]

REPRODUCIBLE_MATH_ENV = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "AVX2,STRICT",
}

HF_TASKS = {
    "feature-extraction": "text",
    "fill-mask": "text",
    "text-classification": "text",
    "token-classification": "text",
    "image-classification": "image",
    "object-detection": "image",
    "automatic-speech-recognition": "audio",
    "text2text-generation": "seq2seq",
    "text-generation": "decoder",
}

HF_MODEL_ENTRY = "exporter.core.hf_models:build"

PEFT_WEIGHTS = "adapter_model.safetensors"
