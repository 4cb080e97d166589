"""graph_snapshot_test: a golden text of an exported program (or .pte), with `.update` targets.

Like bazel-lib's write_source_files: the test compares, and a `bazel run` target writes the
golden into the source tree through BUILD_WORKSPACE_DIRECTORY.
"""

load("//rules:providers.bzl", "ExecuTorchProgramInfo", "ExportedProgramInfo", "GoldenUpdateInfo")
load(":py_entry.bzl", "exporter_py", "golden_test", "macro_label")

def _snapshot_config_impl(ctx):
    if ctx.attr.program:
        program = ctx.attr.program[ExecuTorchProgramInfo]
        exported, subject, extra = program.exported, program.label, [program.pte]
    else:
        exported = ctx.attr.exported[ExportedProgramInfo]
        subject, extra = exported.label, []
    config = ctx.actions.declare_file(ctx.label.name + ".json")
    ctx.actions.write(config, json.encode_indent({
        "label": ctx.attr.test_label,
        "subject": str(subject),
        "pt2": exported.pt2.short_path,
        "pte": extra[0].short_path if extra else None,
        "spec": exported.spec.spec if exported.spec else None,
        "golden": ctx.attr.golden_path,
        "update_target": ctx.attr.update_target,
    }) + "\n")
    runfiles = ctx.runfiles(files = [config, exported.pt2] + extra)
    return [
        DefaultInfo(files = depset([config]), runfiles = runfiles),
        GoldenUpdateInfo(configs = depset([config]), runfiles = runfiles),
    ]

_snapshot_config = rule(
    implementation = _snapshot_config_impl,
    doc = "Writes the JSON config that exporter/golden.py reads (set up by graph_snapshot_test).",
    attrs = {
        "exported": attr.label(providers = [ExportedProgramInfo], doc = "The torch_export to snapshot."),
        "program": attr.label(providers = [ExecuTorchProgramInfo], doc = "The executorch_program to snapshot."),
        "golden_path": attr.string(mandatory = True, doc = "The golden's workspace-relative path."),
        "test_label": attr.string(mandatory = True, doc = "The test's label, for messages."),
        "update_target": attr.string(mandatory = True, doc = "The label of the .update binary."),
    },
)

def graph_snapshot_test(name, golden, exported = None, program = None, **kwargs):
    """Tests that the canonical text of `exported` (a .pt2) or `program` (a .pte) equals `golden`.

    Also declares `<name>.update` (and the alias `<name>_update`): `bazel run` it to write the
    golden. A missing golden fails the test with that command.

    Args:
      name: the test's name.
      golden: the golden file, relative to this package, e.g. "resnet.graph.txt".
      exported: a torch_export target; its graph is snapshotted.
      program: an executorch_program target; its graph and execution plan are snapshotted.
      **kwargs: passed to the py_test (tags, size, timeout, ...).
    """
    if (exported == None) == (program == None):
        fail("graph_snapshot_test {}: set exactly one of exported = \":<torch_export>\" or program = \":<executorch_program>\"".format(macro_label(name)))
    update = name + ".update"
    package = native.package_name()
    _snapshot_config(
        name = name + ".config",
        exported = exported,
        program = program,
        golden_path = package + "/" + golden if package else golden,
        test_label = macro_label(name),
        update_target = macro_label(update),
        visibility = ["//visibility:private"],
    )
    golden_test(
        name = name,
        module = "exporter.checks.golden",
        config = ":{}.config".format(name),
        golden = golden,
        update = update,
        **kwargs
    )

def _golden_list_impl(ctx):
    infos = [dep[GoldenUpdateInfo] for dep in ctx.attr.goldens]
    configs = depset(transitive = [info.configs for info in infos])
    listing = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.write(listing, "".join([f.short_path + "\n" for f in configs.to_list()]))
    runfiles = ctx.runfiles(files = [listing])
    for info in infos:
        runfiles = runfiles.merge(info.runfiles)
    return [
        DefaultInfo(files = depset([listing]), runfiles = runfiles),
        GoldenUpdateInfo(configs = configs, runfiles = runfiles),
    ]

_golden_list = rule(
    implementation = _golden_list_impl,
    doc = "Collects goldens through GoldenUpdateInfo and lists their configs in <name>.txt.",
    attrs = {
        "goldens": attr.label_list(
            providers = [GoldenUpdateInfo],
            doc = "Snapshot test configs and other golden lists.",
        ),
    },
)

def _with_suffix(label, suffix):
    return label + suffix if ":" in label or label.startswith("//") else ":" + label + suffix

def graph_snapshot_updates(name, tests = [], updates = [], **kwargs):
    """`bazel run` target that rewrites the goldens of `tests` and of every target in `updates`.

    Goldens are collected through GoldenUpdateInfo, as bazel-lib's write_source_files does, so
    one target at the root can update every golden of the repository:

        graph_snapshot_updates(
            name = "update_goldens",
            updates = ["//models:update_goldens", "//models/gru:update_goldens"],
        )

    Args:
      name: the binary's name, by convention "update_goldens".
      tests: graph_snapshot_test targets, in this package or any other.
      updates: other graph_snapshot_updates targets, e.g. one per package.
      **kwargs: passed to the py_binary.
    """
    if not tests and not updates:
        fail("graph_snapshot_updates {}: name the goldens to update: tests = [\":<graph_snapshot_test>\"] or updates = [\"//pkg:update_goldens\"]".format(macro_label(name)))
    goldens = name + ".goldens"
    _golden_list(
        name = goldens,
        goldens = [_with_suffix(t, ".config") for t in tests] + [_with_suffix(u, ".goldens") for u in updates],
        visibility = ["//visibility:public"],
    )
    exporter_py(
        native.py_binary,
        name = name,
        module = "exporter.checks.golden",
        data = [":" + goldens],
        args = ["--update", "--list", "$(rootpath :{})".format(goldens)],
        **kwargs
    )
