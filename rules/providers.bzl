"""Providers that carry models, shape specs and programs between rules_torch_export targets."""

TorchModelInfo = provider(
    doc = "A model: how to build the nn.Module, and the files it needs.",
    fields = {
        "label": "Label of the torch_model target.",
        "entry": "'package.module:callable' that returns the nn.Module.",
        "init_args": "dict of keyword arguments for the callable.",
        "checkpoint": "File with a state_dict, or None.",
        "srcs": "depset of the Python files the model imports (its own and its deps').",
        "import_roots": "depset of execroot-relative folders to put on sys.path.",
    },
)

ShapeSpecInfo = provider(
    doc = "A checked shape spec: the inputs and dims torch.export traces with.",
    fields = {
        "label": "Label of the shape_spec target.",
        "spec": "dict in the exporter's spec format (see exporter/spec.py), examples filled in.",
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
        "backends": "list of the backends it was lowered for ([] is the portable runtime).",
        "exported": "The ExportedProgramInfo of its forward method (or its only method).",
        "methods": "dict of method name to the ExportedProgramInfo it was lowered from.",
        "ptd": "The .ptd File holding the weights (weights = \"external\"), or None.",
        "selected_ops": "File: <name>.selected_operators.yaml, the operators (with dtypes) that " +
                        "ExecuTorch's selective build takes.",
        "etrecord": "File: <name>.etrecord, ExecuTorch's ETRecord of the program (built only " +
                    "when something asks for it).",
    },
)

GoldenUpdateInfo = provider(
    doc = "Goldens that a `bazel run` target rewrites (graph_snapshot_test, graph_snapshot_updates).",
    fields = {
        "configs": "depset of Files: the JSON configs that exporter/golden.py reads, one per golden.",
        "runfiles": "runfiles: everything those configs name (programs, the configs themselves).",
    },
)
