"""Providers that carry models, shape specs and programs between rules_torch_export targets.

Every provider of the rules is declared here, next to a checking constructor of the same name in
snake case (`exported_program_info(...)` for ExportedProgramInfo): the rules build their
providers only through those, so a field of the wrong type fails in the rule that made it, with
the provider and the field named, not later in a rule that reads it. (Bazel 5 adds `init` to
provider() for this; Bazel 4.2.3 has none, so the constructors are plain functions.)
"""

TorchModelInfo = provider(
    doc = "A model: how to build the nn.Module, and the files it needs.",
    fields = {
        "label": "Label of the torch_model target.",
        "entry": "'package.module:callable' that returns the nn.Module.",
        "init_args": "dict of keyword arguments for the callable.",
        "checkpoint": "File with a state_dict, or None.",
        "checkpoint_files": "list of the Files of a checkpoint folder (config.json, *.safetensors, ...), all in one folder; [] for none.",
        "srcs": "depset of the Python files the model imports (its own and its deps').",
        "import_roots": "depset of execroot-relative folders to put on sys.path.",
        "lora": "A lora_model's adapter: dict {rank, alpha, target_modules, checkpoint (File or None), " +
                "checkpoint_files (list of a PEFT folder's Files)}; None for a torch_model.",
    },
)

ShapeSpecInfo = provider(
    doc = "A checked shape spec: the inputs and dims torch.export traces with.",
    fields = {
        "label": "Label of the shape_spec target.",
        "spec": "dict in the exporter's spec format (see exporter/core/shape_spec.py), examples filled in.",
    },
)

ExportedProgramInfo = provider(
    doc = "A torch.export ExportedProgram on disk.",
    fields = {
        "label": "Label of the torch_export target.",
        "pt2": "The .pt2 File.",
        "manifest": "The .pt2.json File: sha256 of the .pt2 and of its inputs, signature, ranges.",
        "model": "The TorchModelInfo it was exported from.",
        "spec": "The ShapeSpecInfo it was exported with.",
        "options": "dict: the torch_export's strict, ir, decompose and keep.",
        "quantization": "dict {quantizer, scheme} of a torch_quantize, or None for a float program.",
        "calibration": "The CalibrationDataInfo a torch_quantize observed, or None.",
    },
)

CalibrationDataInfo = provider(
    doc = "Calibration batches for a quantizer, checked against a shape spec.",
    fields = {
        "label": "Label of the calibration_data target.",
        "spec": "The ShapeSpecInfo every batch fits.",
        "batches": "The .calib.pt File: the checked batches, a list of {input name: tensor}.",
        "manifest": "The .calib.json File: count, shapes and sha256 of the batches, and their inputs.",
    },
)

ExecuTorchProgramInfo = provider(
    doc = "An ExecuTorch program on disk.",
    fields = {
        "label": "Label of the executorch_program target.",
        "pte": "The .pte File.",
        "manifest": "The .pte.json File: sha256, size, backends, operators and delegates.",
        "backends": "list of the backends it was lowered for ([] is the portable runtime); with per-method backends, every one any method names.",
        "method_backends": "dict of method name to the list of backends that method was lowered for.",
        "exported": "The ExportedProgramInfo of its forward method (or its only method).",
        "methods": "dict of method name to the ExportedProgramInfo it was lowered from.",
        "ptd": "The .ptd File holding the weights (weights = \"external\"), or None.",
        "selected_ops": "File: <name>.selected_operators.yaml, the operators (with dtypes) that " +
                        "ExecuTorch's selective build takes.",
        "etrecord": "File: <name>.etrecord, ExecuTorch's ETRecord of the program (built only " +
                    "when something asks for it).",
        "tokenizer": "The TokenizerInfo of an llm_program (the app loads it with the program), or None.",
        "foundation": "The FoundationWeightsInfo whose .ptd (also `ptd`) holds the program's shared weights, or None.",
        "backend_options": "dict of backend name to its options, for the backends with options it was lowered for.",
        "backend_packages": "list of Files: the package trees of the backends it was lowered for whose packages have a " +
                            "lock of their own; an action or test that runs the program declares them (docs/backends.md).",
        "release": "string: the ExecuTorch release it was lowered for, e.g. \"1.5\" (the default) or \"1.4\" (docs/compatibility.md).",
    },
)

ExecuTorchReleaseInfo = provider(
    doc = "An ExecuTorch release beside the toolchain's own: its packages, ahead of the toolchain's venv (docs/compatibility.md).",
    fields = {
        "name": "string: the release, e.g. \"1.4\".",
        "identity": "File: its identity.txt, the toolchain's identity with the release's versions in place; an action's config names it.",
        "packages": "list of Files: the package tree an action that imports the release declares (identity.txt among them).",
        "kernel_lists": "dict of kernel library name to the list of its kernel list Files (functions.yaml format).",
        "runtime_python": "File: the python.sh of the venv its runtimes run in when they need another torch than the toolchain's (1.3's), or None.",
        "runtime_identity": "File: that venv's identity.txt, or None.",
    },
)

FoundationWeightsInfo = provider(
    doc = "Weights that several programs share: one program's .ptd, and its index.",
    fields = {
        "label": "Label of the foundation_weights target.",
        "ptd": "The .ptd File (the program's, weights = \"external\").",
        "index": "The .foundation.json File: every entry of the .ptd (key, size, sha256, layout).",
        "program": "The ExecuTorchProgramInfo whose weights these are.",
    },
)

TokenizerInfo = provider(
    doc = "A tokenizer file that ExecuTorch's LLM runner loads, checked at build time.",
    fields = {
        "label": "Label of the tokenizer target.",
        "file": "The tokenizer File (tokenizer.json, tokenizer.model, a tiktoken or llama2.c file).",
        "format": "\"huggingface\", \"sentencepiece\", \"tiktoken\" or \"llama2c\".",
        "manifest": "The .tokenizer.json File: format, sha256, vocabulary size, bos and eos ids.",
    },
)

BundledProgramInfo = provider(
    doc = "A bundled program (.bpte): a program with its test cases, for a device farm.",
    fields = {
        "label": "Label of the bundled_program target.",
        "bpte": "The .bpte File: ExecuTorch's BundledProgram flatbuffer.",
        "manifest": "The .bpte.json File: sha256, the program's digest, each case's sizes and shapes.",
        "program": "The ExecuTorchProgramInfo of the program inside; its backends set the test's default tolerances.",
        "methods": "list of the method names that have test cases.",
    },
)

ModelBundleInfo = provider(
    doc = "A model_bundle: the folder an app ships, and the programs in it.",
    fields = {
        "label": "Label of the model_bundle target.",
        "directory": "The bundle folder (a tree artifact): <sha256>.pte/.pt2 files and index.json.",
        "programs": "dict: program label string -> ExecuTorchProgramInfo or ExportedProgramInfo.",
    },
)

ProgramDashboardInfo = provider(
    doc = "What a program_dashboard shows, for a dashboard that includes it.",
    fields = {
        "reports": "depset of the programs' <name>.report.html Files.",
        "summaries": "depset of the programs' <name>.report.json Files.",
        "budgets": "depset of program_budget_tests' config Files.",
        "numerics": "depset of numerics_tests' config Files.",
        "instructions": "depset of program_budget_tests' instruction counts (<test>.instructions.json).",
    },
)

Arm64BinaryInfo = provider(
    doc = "The aarch64 ELF behind an arm64_binary, for rules that ship it (app_archive).",
    fields = {
        "binary": "File: the aarch64 executable.",
        "runfiles": "runfiles: its own (the ELF at its path, shared libraries, data), without the launcher.",
    },
)

GoldenUpdateInfo = provider(
    doc = "Goldens that a `bazel run` target rewrites (graph_snapshot_test, graph_snapshot_updates).",
    fields = {
        "configs": "depset of Files: the JSON configs that exporter/checks/golden.py reads, one per golden.",
        "runfiles": "runfiles: everything those configs name (programs, the configs themselves).",
    },
)

def _type(*types, keys = [], values = None):
    """A field's check: its value has one of these type() names.

    Args:
      *types: type() names, e.g. "File", "NoneType".
      keys: for a dict, the keys it must have.
      values: for a dict, the check of every value (and it must not be empty).

    Returns:
      The check, for _make.
    """
    return struct(types = list(types), info = None, markers = [], marker_type = None, keys = keys, values = values)

def _info(name, *markers, marker_type = None, none = False):
    """A field's check: its value is the provider `name` (or None when `none`).

    Bazel 4.2.3 cannot ask an instance which provider made it; a marker is a field that only
    that provider has among this file's (with `marker_type`, only it has with that type). With
    several markers, any one will do.

    Args:
      name: the provider's name, for the message.
      *markers: the fields that tell it apart.
      marker_type: the type() of the marker field, when another provider has one too.
      none: whether None is allowed.

    Returns:
      The check, for _make.
    """
    return struct(types = ["NoneType"] if none else [], info = name, markers = list(markers), marker_type = marker_type, keys = [], values = None)

def _is_instance(value, check):
    """Whether `value` has one of the check's types, or is its provider (keys and values aside)."""
    if type(value) in check.types:
        return True
    if check.info == None or type(value) != "struct":
        return False
    return [m for m in check.markers if hasattr(value, m) and (check.marker_type == None or type(getattr(value, m)) == check.marker_type)] != []

def _passes(value, check):
    """Whether `value` passes `check`, with a dict's keys and values."""
    if not _is_instance(value, check):
        return False
    if type(value) != "dict":
        return True
    if check.values != None and (not value or [v for v in value.values() if not _is_instance(v, check.values)]):
        return False
    return not [k for k in check.keys if k not in value]

def _kinds(check):
    return " or ".join(([check.info] if check.info else []) + [t.replace("NoneType", "None") for t in check.types])

def _describe(check):
    """What a value must be, for the message: "dict with the keys [...]", ..."""
    text = _kinds(check)
    if check.keys:
        text += " with the keys {}".format(check.keys)
    if check.values != None:
        text += " of one or more {}".format(_kinds(check.values))
    return text

def _of(fields):
    """" (of <label>)" for a failure message, when the provider has a label field."""
    return " (of {})".format(fields["label"]) if type(fields.get("label")) == "Label" else ""

def _make(info, name, checks, fields):
    """`info(**fields)`, once every field in `checks` is given and passes its check.

    A failure names the provider, the field and the target the provider is for (its `label`
    field, when it has one), e.g. "ExportedProgramInfo.pt2 (of //pkg:x_ep) must be a File".
    The messages are built only on failure: every target of a large graph calls this.
    """
    unknown = sorted([f for f in fields if f not in checks])
    if unknown or len(fields) != len(checks):
        missing = sorted([f for f in checks if f not in fields])
        fail("{}{}: {}{}; its fields are {}".format(
            name,
            _of(fields),
            "unknown fields {} ".format(unknown) if unknown else "",
            "missing fields {}".format(missing) if missing else "",
            sorted(checks.keys()),
        ))
    for field, check in checks.items():
        if not _passes(fields[field], check):
            fail("{}.{}{} must be a {}, not {}".format(name, field, _of(fields), _describe(check), repr(fields[field])))
    return info(**fields)

_SPEC = _info("ShapeSpecInfo", "spec", marker_type = "dict")

_EXPORTED = _info("ExportedProgramInfo", "pt2")

_TORCH_MODEL_CHECKS = {
    "label": _type("Label"),
    "entry": _type("string"),
    "init_args": _type("dict"),
    "checkpoint": _type("File", "NoneType"),
    "checkpoint_files": _type("list"),
    "srcs": _type("depset"),
    "import_roots": _type("depset"),
    "lora": _type("dict", "NoneType", keys = ["alpha", "checkpoint", "checkpoint_files", "rank", "target_modules"]),
}

def torch_model_info(**fields):
    """A TorchModelInfo whose fields are checked: every field given, each of its type, or fail naming it."""
    return _make(TorchModelInfo, "TorchModelInfo", _TORCH_MODEL_CHECKS, fields)

_SHAPE_SPEC_CHECKS = {
    "label": _type("Label"),
    "spec": _type("dict", keys = ["dims", "inputs"]),
}

def shape_spec_info(**fields):
    """A ShapeSpecInfo whose fields are checked: every field given, each of its type, or fail naming it."""
    return _make(ShapeSpecInfo, "ShapeSpecInfo", _SHAPE_SPEC_CHECKS, fields)

_EXPORTED_PROGRAM_CHECKS = {
    "label": _type("Label"),
    "pt2": _type("File"),
    "manifest": _type("File"),
    "model": _info("TorchModelInfo", "entry"),
    "spec": _SPEC,
    "options": _type("dict", keys = ["decompose", "ir", "keep", "strict"]),
    "quantization": _type("dict", "NoneType", keys = ["quantizer", "scheme"]),
    "calibration": _info("CalibrationDataInfo", "batches", none = True),
}

def exported_program_info(**fields):
    """An ExportedProgramInfo whose fields are checked: every field given, each of its type, or fail naming it."""
    return _make(ExportedProgramInfo, "ExportedProgramInfo", _EXPORTED_PROGRAM_CHECKS, fields)

_CALIBRATION_DATA_CHECKS = {
    "label": _type("Label"),
    "spec": _SPEC,
    "batches": _type("File"),
    "manifest": _type("File"),
}

def calibration_data_info(**fields):
    """A CalibrationDataInfo whose fields are checked: every field given, each of its type, or fail naming it."""
    return _make(CalibrationDataInfo, "CalibrationDataInfo", _CALIBRATION_DATA_CHECKS, fields)

_EXECU_TORCH_PROGRAM_CHECKS = {
    "label": _type("Label"),
    "pte": _type("File"),
    "manifest": _type("File"),
    "backends": _type("list"),
    "method_backends": _type("dict"),
    "exported": _EXPORTED,
    "methods": _type("dict", values = _EXPORTED),
    "ptd": _type("File", "NoneType"),
    "selected_ops": _type("File"),
    "etrecord": _type("File"),
    "tokenizer": _info("TokenizerInfo", "format", none = True),
    "foundation": _info("FoundationWeightsInfo", "index", none = True),
    "backend_options": _type("dict"),
    "backend_packages": _type("list"),
    "release": _type("string"),
}

def executorch_program_info(**fields):
    """An ExecuTorchProgramInfo whose fields are checked: every field given, each of its type, or fail naming it."""
    return _make(ExecuTorchProgramInfo, "ExecuTorchProgramInfo", _EXECU_TORCH_PROGRAM_CHECKS, fields)

_EXECU_TORCH_RELEASE_CHECKS = {
    "name": _type("string"),
    "identity": _type("File"),
    "packages": _type("list"),
    "kernel_lists": _type("dict"),
    "runtime_python": _type("File", "NoneType"),
    "runtime_identity": _type("File", "NoneType"),
}

def executorch_release_info(**fields):
    """An ExecuTorchReleaseInfo whose fields are checked: every field given, each of its type, or fail naming it."""
    return _make(ExecuTorchReleaseInfo, "ExecuTorchReleaseInfo", _EXECU_TORCH_RELEASE_CHECKS, fields)

_FOUNDATION_WEIGHTS_CHECKS = {
    "label": _type("Label"),
    "ptd": _type("File"),
    "index": _type("File"),
    "program": _info("ExecuTorchProgramInfo", "pte"),
}

def foundation_weights_info(**fields):
    """A FoundationWeightsInfo whose fields are checked: every field given, each of its type, or fail naming it."""
    return _make(FoundationWeightsInfo, "FoundationWeightsInfo", _FOUNDATION_WEIGHTS_CHECKS, fields)

_BUNDLED_PROGRAM_CHECKS = {
    "label": _type("Label"),
    "bpte": _type("File"),
    "manifest": _type("File"),
    "program": _info("ExecuTorchProgramInfo", "pte"),
    "methods": _type("list"),
}

def bundled_program_info(**fields):
    """A BundledProgramInfo whose fields are checked: every field given, each of its type, or fail naming it."""
    return _make(BundledProgramInfo, "BundledProgramInfo", _BUNDLED_PROGRAM_CHECKS, fields)

_MODEL_BUNDLE_CHECKS = {
    "label": _type("Label"),
    "directory": _type("File"),
    "programs": _type("dict", values = _info("ExecuTorchProgramInfo or ExportedProgramInfo", "pte", "pt2")),
}

def model_bundle_info(**fields):
    """A ModelBundleInfo whose fields are checked: every field given, each of its type, or fail naming it."""
    return _make(ModelBundleInfo, "ModelBundleInfo", _MODEL_BUNDLE_CHECKS, fields)

_GOLDEN_UPDATE_CHECKS = {
    "configs": _type("depset"),
    "runfiles": _type("runfiles"),
}

def golden_update_info(**fields):
    """A GoldenUpdateInfo whose fields are checked: every field given, each of its type, or fail naming it."""
    return _make(GoldenUpdateInfo, "GoldenUpdateInfo", _GOLDEN_UPDATE_CHECKS, fields)

_TOKENIZER_CHECKS = {
    "label": _type("Label"),
    "file": _type("File"),
    "format": _type("string"),
    "manifest": _type("File"),
}

def tokenizer_info(**fields):
    """A TokenizerInfo whose fields are checked: every field given, each of its type, or fail naming it."""
    return _make(TokenizerInfo, "TokenizerInfo", _TOKENIZER_CHECKS, fields)

_PROGRAM_DASHBOARD_CHECKS = {
    "reports": _type("depset"),
    "summaries": _type("depset"),
    "budgets": _type("depset"),
    "numerics": _type("depset"),
    "instructions": _type("depset"),
}

def program_dashboard_info(**fields):
    """A ProgramDashboardInfo whose fields are checked: every field given, each of its type, or fail naming it."""
    return _make(ProgramDashboardInfo, "ProgramDashboardInfo", _PROGRAM_DASHBOARD_CHECKS, fields)

_ARM64_BINARY_CHECKS = {
    "binary": _type("File"),
    "runfiles": _type("runfiles"),
}

def arm64_binary_info(**fields):
    """An Arm64BinaryInfo whose fields are checked: every field given, each of its type, or fail naming it."""
    return _make(Arm64BinaryInfo, "Arm64BinaryInfo", _ARM64_BINARY_CHECKS, fields)
