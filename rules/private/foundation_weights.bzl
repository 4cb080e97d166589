"""foundation_weights: one program's .ptd as weights that other programs share, with its index
(exporter/actions/foundation.py)."""

load("//rules:providers.bzl", "ExecuTorchProgramInfo", "FoundationWeightsInfo", "foundation_weights_info")
load("//rules/private/lib:attr_checks.bzl", "message_prefix")
load("//rules/private/lib:exporter_action.bzl", "run_exporter")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")

def _foundation_weights_impl(ctx):
    where = message_prefix("foundation_weights", ctx.label)
    program = ctx.attr.program[ExecuTorchProgramInfo]
    if program.foundation:
        fail(where + "program {} shares the weights of {}; name a program whose weights are its own, in its .ptd (weights = \"external\")".format(program.label, program.foundation.label))
    if not program.ptd:
        fail(where + "program {} keeps its weights in its .pte; set weights = \"external\" on it, so that they are in a .ptd to share".format(program.label))
    index = ctx.actions.declare_file(ctx.label.name + ".foundation.json")
    run_exporter(
        ctx,
        command = "foundation",
        progress_message = "Indexing the weights of {} for {}".format(program.label, ctx.label),
        config = {"program": str(program.label), "ptd": program.ptd.path, "manifest": program.manifest.path},
        inputs = [program.ptd, program.manifest],
        outputs = {"index": index},
    )
    files = [program.ptd, index]
    return [
        foundation_weights_info(label = ctx.label, ptd = program.ptd, index = index, program = program),
        DefaultInfo(files = depset(files), runfiles = ctx.runfiles(files = files)),
    ]

foundation_weights = rule(
    implementation = _foundation_weights_impl,
    doc = """Weights that several programs share: the .ptd of one program, which an app ships once.

`program` is an executorch_program or llm_program with weights = "external". Programs built
with `foundation = ":<this target>"` put every tensor the foundation holds in it, referenced by
name, and keep only their own in their .pte (a lora_model's factors). The build writes
<name>.foundation.json, the index of every entry of the .ptd (key, size, sha256, dtype and
shape), against which each such program's lowering checks every tensor it references: a
program whose base weights differ from the foundation's fails in one line. The .ptd's bytes
depend on `program` alone, so adding a program that shares it rebuilds nothing else
(docs/llm.md, "LoRA adapters: one set of weights").""",
    attrs = {
        "program": attr.label(
            mandatory = True,
            providers = [ExecuTorchProgramInfo],
            doc = "The program whose .ptd holds the weights to share (weights = \"external\").",
        ),
    },
    provides = [FoundationWeightsInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)
