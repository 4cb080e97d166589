"""The container image's interpreter: a fixed path, set by a flag, behind a tiny launcher."""

InterpreterPathInfo = provider(
    doc = "Where the container image keeps its Python interpreter.",
    fields = {"path": "Absolute path of the interpreter inside the image."},
)

def _interpreter_path_impl(ctx):
    path = ctx.build_setting_value
    if not path.startswith("/"):
        fail("{} is {}; it must be an absolute path inside the container image".format(
            ctx.label,
            repr(path),
        ))
    return [InterpreterPathInfo(path = path)]

interpreter_path = rule(
    implementation = _interpreter_path_impl,
    doc = "A string flag: the interpreter's absolute path inside the container image.",
    build_setting = config.string(flag = True),
)

_LAUNCHER = """#!/bin/sh
# Runs the Python that the execution platform's container image provides at a fixed path.
exec "{path}" "$@"
"""

def _image_interpreter_impl(ctx):
    launcher = ctx.actions.declare_file(ctx.label.name + ".sh")
    path = ctx.attr.path[InterpreterPathInfo].path
    ctx.actions.write(launcher, _LAUNCHER.format(path = path), is_executable = True)
    return [DefaultInfo(executable = launcher, files = depset([launcher]))]

image_interpreter = rule(
    implementation = _image_interpreter_impl,
    doc = "A launcher script for the interpreter at a fixed path inside the container image. " +
          "Its bytes, and so every exporter action's key, depend on that path only.",
    attrs = {
        "path": attr.label(
            mandatory = True,
            providers = [InterpreterPathInfo],
            doc = "The interpreter_path flag that names the interpreter.",
        ),
    },
    executable = True,
)
