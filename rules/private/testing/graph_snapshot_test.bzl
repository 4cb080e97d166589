"""graph_snapshot_test: a golden text of an exported program (or .pte), with `.update` targets.

Like bazel-lib's write_source_files: the test compares, and a `bazel run` target writes the
golden into the source tree through BUILD_WORKSPACE_DIRECTORY.
"""

load("//rules:providers.bzl", "ExecuTorchProgramInfo", "ExportedProgramInfo", "GoldenUpdateInfo", "golden_update_info")
load("//rules/private:program_report.bzl", "GRAPHVIZ_ATTRS")
load("//rules/private/lib:attr_checks.bzl", "macro_label")
load("//rules/private/lib:exporter_action.bzl", "run_exporter")
load("//rules/private/lib:exporter_py.bzl", "EXPORTER_MODULES", "exporter_py")
load(":config_test.bzl", "GOLDEN_ATTRS", "config_target_attrs", "config_test_attrs", "config_test_rule", "config_test_update", "write_test_config")

def _snapshot_text(ctx, subject, exported, pte):
    """Declares the GraphSnapshot action; returns <name>.snapshot.txt.

    The action renders the text in the export's warm worker (exporter/actions/snapshot_text.py).
    """
    text = ctx.actions.declare_file(ctx.label.name + ".snapshot.txt")
    run_exporter(
        ctx,
        command = "snapshot_text",
        progress_message = "Writing the graph snapshot of {} for {}".format(subject, ctx.attr.test_label),
        config = {
            "subject": str(subject),
            "pt2": exported.pt2.path,
            "pte": pte.path if pte else None,
            "spec": exported.spec.spec,
        },
        inputs = [exported.pt2] + ([pte] if pte else []),
        outputs = {"text": text},
    )
    return text

def _snapshot_test_impl(ctx):
    if ctx.attr.program:
        program = ctx.attr.program[ExecuTorchProgramInfo]
        exported, subject, pte = program.exported, program.label, program.pte
    else:
        exported = ctx.attr.exported[ExportedProgramInfo]
        subject, pte = exported.label, None
    text = _snapshot_text(ctx, subject, exported, pte)
    config = {
        "label": ctx.attr.test_label,
        "subject": str(subject),
        "pt2": exported.pt2.short_path,
        "pte": pte.short_path if pte else None,
        "spec": exported.spec.spec,
        "text": text.short_path,
        "golden": ctx.attr.golden_path,
        "update_target": ctx.attr.update_target,
        # graphviz draws a failing test's graphs side by side (checks/snapshot_diff.py).
        "dot": ctx.file._dot.short_path,
        "dot_version": ctx.file._dot_version.short_path,
    }
    dot_files = [ctx.file._dot, ctx.file._dot_version] + ctx.attr._dot_files.files.to_list()
    subject_files = [exported.pt2] + ([pte] if pte else [])

    # The test and the .update targets read the text; the .pt2 and .pte stay in the test's
    # runfiles for tools that render the text in-process (bench/test_cost.py's baseline).
    return write_test_config(ctx, config, [text] + subject_files + dot_files, golden_files = [text])

_snapshot_test = config_test_rule(
    implementation = _snapshot_test_impl,
    doc = "The rule behind graph_snapshot_test: it checks the attributes, renders the text it compares, and writes the JSON config that exporter/checks/golden.py reads and the launcher that runs it.",
    exporter = True,
    attrs = config_test_attrs({
        "exported": attr.label(providers = [ExportedProgramInfo], doc = "The torch_export to snapshot."),
        "program": attr.label(providers = [ExecuTorchProgramInfo], doc = "The executorch_program to snapshot."),
    }, GOLDEN_ATTRS, GRAPHVIZ_ATTRS),
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
      **kwargs: passed to the test (tags, size, timeout, ...).
    """
    if (exported == None) == (program == None):
        fail("graph_snapshot_test {}: set exactly one of exported = \":<torch_export>\" or program = \":<executorch_program>\"".format(macro_label(name)))
    _snapshot_test(
        exported = exported,
        program = program,
        **config_target_attrs(name, EXPORTER_MODULES["golden"], kwargs, golden = golden, updatable = True)
    )
    config_test_update(name, golden, kwargs)

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
        golden_update_info(configs = configs, runfiles = runfiles),
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
      **kwargs: passed to the py_binary (tags also to its list of goldens).
    """
    if not tests and not updates:
        fail("graph_snapshot_updates {}: name the goldens to update: tests = [\":<graph_snapshot_test>\"] or updates = [\"//pkg:update_goldens\"]".format(macro_label(name)))
    goldens = name + ".goldens"
    _golden_list(
        name = goldens,
        goldens = [_with_suffix(t, "") for t in tests] + [_with_suffix(u, ".goldens") for u in updates],
        tags = kwargs.get("tags"),  # a manual binary's list must not build its tests' targets in //...
        visibility = ["//visibility:public"],
    )
    exporter_py(
        native.py_binary,
        name = name,
        module = EXPORTER_MODULES["golden"],
        data = [":" + goldens],
        args = ["--update", "--list", "$(rootpath :{})".format(goldens)],
        **kwargs
    )
