"""torch_export: runs torch.export on a torch_model with a shape_spec, giving a .pt2."""

load("//rules:providers.bzl", "ExportedProgramInfo", "ShapeSpecInfo", "TorchModelInfo")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")
load(":exporter_action.bzl", "run_exporter")

def _torch_export_impl(ctx):
    model = ctx.attr.model[TorchModelInfo]
    spec = ctx.attr.shapes[ShapeSpecInfo]
    pt2 = ctx.actions.declare_file(ctx.label.name + ".pt2")
    manifest = ctx.actions.declare_file(ctx.label.name + ".pt2.json")
    checkpoint = [model.checkpoint] if model.checkpoint else []
    run_exporter(
        ctx,
        command = "export",
        mnemonic = "TorchExport",
        progress_message = "Exporting {} (torch.export of {})".format(ctx.label, model.label),
        config = {
            "model": {
                "label": str(model.label),
                "entry": model.entry,
                "init_args": model.init_args,
                "checkpoint": model.checkpoint.path if model.checkpoint else None,
                "srcs": [f.path for f in model.srcs.to_list()],
                "import_roots": model.import_roots.to_list(),
            },
            "spec_label": str(spec.label),
            "spec": spec.spec,
            "strict": ctx.attr.strict,
        },
        inputs = depset(checkpoint, transitive = [model.srcs]),
        outputs = {"pt2": pt2, "manifest": manifest},
    )
    return [
        ExportedProgramInfo(label = ctx.label, pt2 = pt2, manifest = manifest, model = model, spec = spec),
        DefaultInfo(files = depset([pt2, manifest]), runfiles = ctx.runfiles(files = [pt2, manifest])),
    ]

torch_export = rule(
    implementation = _torch_export_impl,
    doc = "Exports a torch_model with torch.export. Outputs <name>.pt2 and <name>.pt2.json.",
    attrs = {
        "model": attr.label(mandatory = True, providers = [TorchModelInfo], doc = "The torch_model to export."),
        "shapes": attr.label(mandatory = True, providers = [ShapeSpecInfo], doc = "The shape_spec to trace with."),
        "strict": attr.bool(
            default = False,
            doc = "Export with TorchDynamo (strict = True) or by Python tracing (False, torch's default).",
        ),
    },
    provides = [ExportedProgramInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)
