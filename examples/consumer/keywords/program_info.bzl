"""program_info: an example of a rule that reads rules_torch_export's providers."""

load("@rules_torch_export//rules:defs.bzl", "ExecuTorchProgramInfo")

def _program_info_impl(ctx):
    program = ctx.attr.program[ExecuTorchProgramInfo]
    out = ctx.actions.declare_file(ctx.label.name + ".json")
    ctx.actions.write(out, json.encode_indent({
        "program": str(program.label),
        "exported": str(program.exported.label),
        "model": str(program.exported.model.label),
        "entry": program.exported.model.entry,
        "shape_spec": str(program.exported.spec.label),
        "backends": program.backends,
        "pte": program.pte.short_path,
    }) + "\n")
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

program_info = rule(
    implementation = _program_info_impl,
    doc = "Writes <name>.json: where a program came from (model, spec, export) and its .pte.",
    attrs = {
        "program": attr.label(
            mandatory = True,
            providers = [ExecuTorchProgramInfo],
            doc = "An executorch_program target.",
        ),
    },
)
