"""Public API of rules_torch_export. Load everything from here; rules/private/ may change.

    load("@rules_torch_export//rules:defs.bzl", "torch_model", "shape_spec", "tensor", "dim",
         "torch_export", "executorch_program")

    torch_model(name = "resnet", srcs = ["resnet.py"], entry = "models.resnet:resnet18")
    shape_spec(
        name = "image_batch",
        inputs = {"x": tensor(["batch", 3, 224, 224], dtype = "float32")},
        dims = {"batch": dim(min = 1, max = 32)},
    )
    torch_export(name = "resnet_ep", model = ":resnet", shapes = ":image_batch")
    executorch_program(name = "resnet_pte", exported = ":resnet_ep", backends = ["xnnpack"])

See docs/rules.md for every attribute.
"""

load(
    "//rules:providers.bzl",
    _BundledProgramInfo = "BundledProgramInfo",
    _CalibrationDataInfo = "CalibrationDataInfo",
    _ExecuTorchProgramInfo = "ExecuTorchProgramInfo",
    _ExportedProgramInfo = "ExportedProgramInfo",
    _FoundationWeightsInfo = "FoundationWeightsInfo",
    _GoldenUpdateInfo = "GoldenUpdateInfo",
    _ModelBundleInfo = "ModelBundleInfo",
    _ProgramDashboardInfo = "ProgramDashboardInfo",
    _ShapeSpecInfo = "ShapeSpecInfo",
    _TokenizerInfo = "TokenizerInfo",
    _TorchModelInfo = "TorchModelInfo",
)
load("//rules/private:app_archive.bzl", _app_archive = "app_archive")
load("//rules/private:arm64_binary.bzl", _arm64_binary = "arm64_binary")
load("//rules/private:backends.bzl", _coreml = "coreml", _ethos_u = "ethos_u", _openvino = "openvino", _tosa = "tosa")
load("//rules/private:bundled_program.bzl", _bundled_program = "bundled_program")
load("//rules/private:calibration_data.bzl", _calibration_data = "calibration_data")
load("//rules/private:executorch_benchmark.bzl", _executorch_benchmark = "executorch_benchmark", _executorch_profile = "executorch_profile")
load("//rules/private:executorch_program.bzl", _executorch_program = "executorch_program")
load("//rules/private:executorch_programs.bzl", _executorch_programs = "executorch_programs")
load("//rules/private:executorch_selected_ops.bzl", _executorch_selected_ops = "executorch_selected_ops")
load("//rules/private:foundation_weights.bzl", _foundation_weights = "foundation_weights")
load("//rules/private:hf_model.bzl", _hf_model = "hf_model")
load("//rules/private:llm_program.bzl", _llm_program = "llm_program")
load("//rules/private:lora_model.bzl", _lora_model = "lora_model")
load("//rules/private:model_bundle.bzl", _model_bundle = "model_bundle")
load("//rules/private:multimodal_program.bzl", _multimodal_program = "multimodal_program")
load("//rules/private:program_report.bzl", _program_dashboard = "program_dashboard")
load("//rules/private:pte_inspect.bzl", _pte_inspect = "pte_inspect")
load(
    "//rules/private:shape_spec.bzl",
    _AUTO = "AUTO",
    _DYNAMIC = "DYNAMIC",
    _STATIC = "STATIC",
    _dim = "dim",
    _shape_spec = "shape_spec",
    _tensor = "tensor",
)
load("//rules/private:tokenizer.bzl", _tokenizer = "tokenizer")
load("//rules/private:torch_export.bzl", _torch_export = "torch_export")
load("//rules/private:torch_model.bzl", _torch_model = "torch_model")
load("//rules/private:torch_quantize.bzl", _torch_quantize = "torch_quantize")
load("//rules/private/testing:bundled_program_test.bzl", _bundled_program_test = "bundled_program_test")
load("//rules/private/testing:delegate_structure_test.bzl", _delegate_structure_test = "delegate_structure_test")
load("//rules/private/testing:foundation_budget_test.bzl", _foundation_budget_test = "foundation_budget_test")
load(
    "//rules/private/testing:graph_snapshot_test.bzl",
    _graph_snapshot_test = "graph_snapshot_test",
    _graph_snapshot_updates = "graph_snapshot_updates",
)
load("//rules/private/testing:llm_generation_test.bzl", _llm_generation_test = "llm_generation_test")
load("//rules/private/testing:multimodal_generation_test.bzl", _multimodal_generation_test = "multimodal_generation_test")
load("//rules/private/testing:numerics_test.bzl", _numerics_test = "numerics_test", _step = "step")
load("//rules/private/testing:program_budget_test.bzl", _program_budget_test = "program_budget_test")
load("//rules/private/testing:seq2seq_generation_test.bzl", _seq2seq_generation_test = "seq2seq_generation_test")

torch_model = _torch_model

# A Hugging Face transformers model by task, from a config or a checkpoint folder (docs/huggingface.md).
hf_model = _hf_model
shape_spec = _shape_spec
tensor = _tensor
dim = _dim

# Dynamism hints for int sizes: tensor([6, 5], hint = AUTO), hint = {0: DYNAMIC}, or
# shape_spec(hint = AUTO) for every input (see docs/shape_specs.md).
AUTO = _AUTO
DYNAMIC = _DYNAMIC
STATIC = _STATIC
torch_export = _torch_export
executorch_program = _executorch_program

# Backends with their options, beside "xnnpack": backends = [openvino(device = "CPU")],
# [coreml(precision = "fp32")] (docs/backends.md).
openvino = _openvino
coreml = _coreml
tosa = _tosa
ethos_u = _ethos_u

# What is checked here of a program no runtime here can run (Core ML's): its delegates' structure.
delegate_structure_test = _delegate_structure_test

# One program per device class, with their numerics tests (docs/programs.md).
executorch_programs = _executorch_programs

# Language models for ExecuTorch's LLM runner (docs/llm.md).
tokenizer = _tokenizer
llm_program = _llm_program

# An encoder-decoder program's greedy tokens against the eager model's (docs/huggingface.md).
seq2seq_generation_test = _seq2seq_generation_test
llm_generation_test = _llm_generation_test

# Vision-language models for ExecuTorch's MultimodalRunner (docs/llm.md, "Images and audio").
multimodal_program = _multimodal_program
multimodal_generation_test = _multimodal_generation_test

# Many programs, one set of weights: LoRA adapters over a base model, whose programs share the
# base program's .ptd (docs/llm.md, "LoRA adapters: one set of weights").
lora_model = _lora_model
foundation_weights = _foundation_weights
foundation_budget_test = _foundation_budget_test

# Selective build: one operator list for a runtime that runs several programs (docs/deployment.md).
executorch_selected_ops = _executorch_selected_ops

# Quantization (docs/quantization.md): a torch_quantize takes the place of a torch_export.
calibration_data = _calibration_data
torch_quantize = _torch_quantize

# Downstream of the programs (docs/downstream.md).
graph_snapshot_test = _graph_snapshot_test
graph_snapshot_updates = _graph_snapshot_updates
numerics_test = _numerics_test

# One call of a stateful numerics_test(steps = [...]) (docs/stateful.md).
step = _step
pte_inspect = _pte_inspect

# Checks for deployment (docs/deployment.md): size and memory budgets, and bundled programs
# (a .pte with test cases, for device farms).
program_budget_test = _program_budget_test
bundled_program = _bundled_program
bundled_program_test = _bundled_program_test

TorchModelInfo = _TorchModelInfo
ShapeSpecInfo = _ShapeSpecInfo
ExportedProgramInfo = _ExportedProgramInfo
ExecuTorchProgramInfo = _ExecuTorchProgramInfo
TokenizerInfo = _TokenizerInfo
FoundationWeightsInfo = _FoundationWeightsInfo
CalibrationDataInfo = _CalibrationDataInfo
GoldenUpdateInfo = _GoldenUpdateInfo

# What an app ships: programs in one folder, files named by sha256, plus index.json.
model_bundle = _model_bundle
ModelBundleInfo = _ModelBundleInfo

# A bundled_program's .bpte, for rules that ship test programs to a device farm.
BundledProgramInfo = _BundledProgramInfo

# Reports (docs/report.md): every program writes <name>.report.html (output group report); a
# dashboard shows many programs on one page, linking their reports.
program_dashboard = _program_dashboard
ProgramDashboardInfo = _ProgramDashboardInfo

# Latency in ExecuTorch's native runtime, and where it goes, as `bazel run` targets (docs/native.md).
executorch_benchmark = _executorch_benchmark
executorch_profile = _executorch_profile

# C++ against ExecuTorch's native runtime (@torch_export_venv//executorch:runtime and its kernel
# and backend libraries; docs/native.md): the copts every target that includes its headers needs.
EXECUTORCH_COPTS = ["-std=c++17"]

# Apps for arm64 phones and boards (docs/native.md, "arm64"): a binary built for
# //platforms:linux_aarch64 that runs here under qemu, and an app with its libraries as one archive.
arm64_binary = _arm64_binary
app_archive = _app_archive
