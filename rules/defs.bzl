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
    _ExecuTorchProgramInfo = "ExecuTorchProgramInfo",
    _ExportedProgramInfo = "ExportedProgramInfo",
    _ShapeSpecInfo = "ShapeSpecInfo",
    _TorchModelInfo = "TorchModelInfo",
)
load("//rules/private:executorch_program.bzl", _executorch_program = "executorch_program")
load("//rules/private:model_bundle.bzl", _ModelBundleInfo = "ModelBundleInfo", _model_bundle = "model_bundle")
load("//rules/private:shape_spec.bzl", _dim = "dim", _shape_spec = "shape_spec", _tensor = "tensor")
load("//rules/private:torch_export.bzl", _torch_export = "torch_export")
load("//rules/private:torch_model.bzl", _torch_model = "torch_model")

torch_model = _torch_model
shape_spec = _shape_spec
tensor = _tensor
dim = _dim
torch_export = _torch_export
executorch_program = _executorch_program

TorchModelInfo = _TorchModelInfo
ShapeSpecInfo = _ShapeSpecInfo
ExportedProgramInfo = _ExportedProgramInfo
ExecuTorchProgramInfo = _ExecuTorchProgramInfo

# What an app ships: programs in one folder, files named by sha256, plus index.json.
model_bundle = _model_bundle
ModelBundleInfo = _ModelBundleInfo
