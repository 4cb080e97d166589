"""The toolchain rule: the interpreter, the exporter and the environment's identity."""

load(":deadline.bzl", "ExporterDeadlineStampInfo")

def _torch_export_toolchain_impl(ctx):
    return [platform_common.ToolchainInfo(
        python = ctx.executable.python,
        exporter_main = ctx.file.exporter_main,
        exporter_srcs = depset(ctx.files.exporter_srcs),
        report_srcs = depset(ctx.files.report_srcs),
        identity = ctx.file.identity,
        kernel_lists = {
            library: target.files.to_list()
            for target, library in ctx.attr.kernel_lists.items()
        },
        worker_requirements = ctx.attr.worker_requirements,
        deadline_stamp = ctx.attr._deadline_stamp[ExporterDeadlineStampInfo].stamp,
        deadline_flag = ctx.attr._deadline_stamp[ExporterDeadlineStampInfo].flag,
    )]

torch_export_toolchain = rule(
    implementation = _torch_export_toolchain_impl,
    doc = "Everything an exporter action needs besides the model: Python, the tool, the identity.",
    attrs = {
        "exporter_main": attr.label(
            allow_single_file = [".py"],
            mandatory = True,
            doc = "The exporter's entry script.",
        ),
        "exporter_srcs": attr.label_list(
            allow_files = [".py"],
            doc = "The exporter package's sources, but for its reports' renderer.",
        ),
        "identity": attr.label(
            allow_single_file = True,
            mandatory = True,
            doc = "A file naming the Python version and every installed distribution. Every " +
                  "exporter action reads it, so a new torch changes every cache key.",
        ),
        "kernel_lists": attr.label_keyed_string_dict(
            allow_files = True,  # [".yaml"] would reject a library the wheel does not ship
            doc = "{files: library name}: the kernel lists (ExecuTorch's functions.yaml format) " +
                  "of the installed ExecuTorch, e.g. its portable library's. An empty target " +
                  "means the wheel ships no list for that library.",
        ),
        "python": attr.label(
            allow_single_file = True,
            executable = True,
            cfg = "exec",
            mandatory = True,
            doc = "An interpreter launcher that works at any path (no absolute path in actions).",
        ),
        "report_srcs": attr.label_list(
            allow_files = [".py"],
            doc = "The reports' renderer (exporter/reports), a tool of the actions that draw a report only.",
        ),
        "_deadline_stamp": attr.label(default = Label("//rules:exporter_deadline.stamp")),
        "worker_requirements": attr.string_dict(
            doc = "Execution requirements for exporter actions, such as the persistent worker's.",
        ),
    },
)
