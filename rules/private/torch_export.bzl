"""torch_export: runs torch.export on a torch_model with a shape_spec, giving a .pt2."""

load("//rules:providers.bzl", "ExportedProgramInfo", "ShapeSpecInfo", "TorchModelInfo")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")
load(":exporter_action.bzl", "run_exporter")
load(":linear_expr.bzl", "is_identifier")
load(":torch_model.bzl", "model_action_config")

IRS = ["training", "inference", "core_aten"]

def _check_op_names(ctx, attr_name, names):
    for name in names:
        parts = name.split(".")
        if len(parts) not in (2, 3) or not all([is_identifier(p) for p in parts]):
            fail("torch_export {}: {} has {}; name an operator as namespace.op or namespace.op.overload, e.g. \"aten.gelu.default\"".format(
                ctx.label,
                attr_name,
                repr(name),
            ))

def _check_ir(ctx):
    """ir, decompose and keep must agree; the exporter resolves the operator names."""
    where = "torch_export {}: ".format(ctx.label)
    _check_op_names(ctx, "decompose", ctx.attr.decompose)
    _check_op_names(ctx, "keep", ctx.attr.keep)
    both = [op for op in ctx.attr.keep if op in ctx.attr.decompose]
    if both:
        fail(where + "{} is in both keep and decompose; remove it from one of them".format(repr(both[0])))
    if ctx.attr.keep and ctx.attr.ir != "core_aten":
        fail(where + "keep only applies to ir = \"core_aten\" (the other IRs decompose nothing by default); set ir = \"core_aten\" or drop keep")
    if ctx.attr.decompose and ctx.attr.ir == "training":
        fail(where + "decompose needs ir = \"inference\" or \"core_aten\"; the training IR runs no decompositions")

def _torch_export_impl(ctx):
    model = ctx.attr.model[TorchModelInfo]
    spec = ctx.attr.shapes[ShapeSpecInfo]
    _check_ir(ctx)
    pt2 = ctx.actions.declare_file(ctx.label.name + ".pt2")
    manifest = ctx.actions.declare_file(ctx.label.name + ".pt2.json")
    model_config, model_files = model_action_config(model)
    options = {
        "strict": ctx.attr.strict,
        "ir": ctx.attr.ir,
        "decompose": ctx.attr.decompose,
        "keep": ctx.attr.keep,
    }
    log = run_exporter(
        ctx,
        command = "export",
        mnemonic = "TorchExport",
        progress_message = "Exporting {} (torch.export of {})".format(ctx.label, model.label),
        config = dict(options, **{
            "model": model_config,
            "spec_label": str(spec.label),
            "spec": spec.spec,
        }),
        inputs = model_files,
        outputs = {"pt2": pt2, "manifest": manifest},
    )
    return [
        ExportedProgramInfo(
            label = ctx.label,
            pt2 = pt2,
            manifest = manifest,
            model = model,
            spec = spec,
            options = options,
            quantization = None,
            calibration = None,
        ),
        DefaultInfo(files = depset([pt2, manifest]), runfiles = ctx.runfiles(files = [pt2, manifest])),
        OutputGroupInfo(logs = depset([log])),
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
        "ir": attr.string(
            default = "training",
            values = IRS,
            doc = "The graph's operator set: \"training\" (torch.export's own graph), \"inference\" " +
                  "(run_decompositions({}): functional, no training ops) or \"core_aten\" (the Core ATen " +
                  "decomposition table).",
        ),
        "decompose": attr.string_list(
            doc = "Operators to decompose on top of the ir's table, e.g. [\"aten.gelu.default\"] " +
                  "(ir = \"inference\" or \"core_aten\").",
        ),
        "keep": attr.string_list(
            doc = "Operators that ir = \"core_aten\" keeps intact instead of decomposing, e.g. " +
                  "[\"aten.linear.default\"].",
        ),
    },
    provides = [ExportedProgramInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)
