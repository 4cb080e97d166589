"""exporter_warm_up: the action that starts a persistent worker as a build starts (exporter_action.bzl)."""

load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")
load(":exporter_action.bzl", "run_warm_up")

def _exporter_warm_up_impl(ctx):
    return [DefaultInfo(files = depset([run_warm_up(ctx, ctx.attr.command)]))]

exporter_warm_up = rule(
    implementation = _exporter_warm_up_impl,
    doc = "Warms up the persistent worker of `command` with the build's first actions, off the " +
          "critical path: its actions wait for this one, which needs no input. Outputs <name>.warm.",
    attrs = {
        "command": attr.string(
            mandatory = True,
            values = ["lower"],
            doc = "The exporter command whose worker to warm (an action that waits on others).",
        ),
    },
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)
