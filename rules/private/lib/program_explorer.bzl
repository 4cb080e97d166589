"""program_explorer: `bazel run <program>.explore` serves a program in Google's Model Explorer.

executorch_program and llm_program declare one per program, tagged "manual": its venv
(@model_explorer, tools/explorer/repositories.bzl, about 690 MB), which it takes as a toolchain,
is fetched only when something builds it by name (here, //tests/report:explore_test), never by a
consumer's `bazel build //...` nor by a query. It writes one small launcher and runs no action
on the program, so the program's outputs stay as they are."""

load("//rules:providers.bzl", "ExecuTorchProgramInfo")
load(":runfiles.bzl", "rlocation", "write_launcher")

# A string, as rule(toolchains = ...) takes in Bazel 4.2.3, resolved in this repository.
_EXPLORER_TOOLCHAIN_TYPE = str(Label("//tools/explorer:toolchain_type"))

_LAUNCHER = """exec "$runfiles/{python}" "$runfiles/{explore}" "{label}" "$runfiles/{pte}" "$@"
"""

def _program_explorer_impl(ctx):
    pte = ctx.attr.program[ExecuTorchProgramInfo].pte
    python = ctx.toolchains[_EXPLORER_TOOLCHAIN_TYPE].python
    launcher = ctx.actions.declare_file(ctx.label.name)
    write_launcher(ctx, launcher, "serves {} in Model Explorer on 127.0.0.1".format(ctx.attr.program.label), _LAUNCHER.format(
        label = ctx.label,
        python = rlocation(ctx, python),
        explore = rlocation(ctx, ctx.file._explore),
        pte = rlocation(ctx, pte),
    ))
    runfiles = ctx.runfiles(files = [launcher, pte, python, ctx.file._explore])
    return [DefaultInfo(executable = launcher, runfiles = runfiles)]

program_explorer = rule(
    implementation = _program_explorer_impl,
    doc = "Runs Model Explorer with ExecuTorch's .pte adapter on `program`, on 127.0.0.1.",
    attrs = {
        "program": attr.label(mandatory = True, providers = [ExecuTorchProgramInfo], doc = "The program to show."),
        "_explore": attr.label(default = Label("//tools/explorer:explore.py"), allow_single_file = True),
    },
    executable = True,
    toolchains = [_EXPLORER_TOOLCHAIN_TYPE],
)

def program_explorer_for(name, kwargs):
    """Declares `<name>.explore` for the program `name`, declared with the macro's kwargs."""
    program_explorer(
        name = name + ".explore",
        program = ":" + name,
        tags = ["manual"],
        testonly = kwargs.get("testonly"),
        visibility = kwargs.get("visibility"),
    )
