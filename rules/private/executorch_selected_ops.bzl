"""executorch_selected_ops: one selected-operators list for an app that runs several programs."""

load("//rules:providers.bzl", "ExecuTorchProgramInfo")
load("//rules/private/lib:attr_checks.bzl", "message_prefix")
load("//rules/private/lib:exporter_action.bzl", "DEADLINE_ATTRS", "run_exporter")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")

def _executorch_selected_ops_impl(ctx):
    if not ctx.attr.programs:
        fail(message_prefix("executorch_selected_ops", ctx.label) + "programs is empty; list the executorch_program targets the app runs, e.g. programs = [\":model_pte\"]")
    programs = [p[ExecuTorchProgramInfo] for p in ctx.attr.programs]
    out = ctx.actions.declare_file(ctx.label.name + ".selected_operators.yaml")
    manifest = ctx.actions.declare_file(ctx.label.name + ".selected_operators.json")
    run_exporter(
        ctx,
        command = "selected_ops",
        progress_message = "Merging the operator lists of {}".format(ctx.label),
        config = {"lists": [{"label": str(p.label), "file": p.selected_ops.path} for p in programs]},
        inputs = [p.selected_ops for p in programs],
        outputs = {"selected_ops": out, "manifest": manifest},
    )
    return [DefaultInfo(files = depset([out, manifest]), runfiles = ctx.runfiles(files = [out, manifest]))]

executorch_selected_ops = rule(
    implementation = _executorch_selected_ops_impl,
    doc = "Merges the selected-operators lists of several executorch_programs into one " +
          "<name>.selected_operators.yaml, the list ExecuTorch's selective build takes for a " +
          "runtime that runs all of them (and <name>.selected_operators.json: the programs and " +
          "operators, for review).",
    attrs = dict(DEADLINE_ATTRS, **{
        "programs": attr.label_list(
            providers = [ExecuTorchProgramInfo],
            doc = "The executorch_program targets whose operators the runtime must hold.",
        ),
    }),
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)
