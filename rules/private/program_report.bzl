"""A program's report (<name>.report.html, output group `report`) and program_dashboard.

Every rule that lowers with lowering.bzl's lower_program writes a report beside its program:
one self-contained HTML file (exporter/reports/report.py) drawn from the lowering's files and its
graph record, with each method's graph laid out by graphviz's dot (@graphviz,
toolchain/graphviz_repository.bzl), and a summary JSON that program_dashboard reads.
"""

load("//rules:providers.bzl", "ExecuTorchProgramInfo", "ProgramDashboardInfo", "program_dashboard_info")
load("//rules/private/lib:attr_checks.bzl", "message_prefix")
load("//rules/private/lib:exporter_action.bzl", "DEADLINE_ATTRS", "run_exporter")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")

# graphviz's dot, declared: its launcher, its files (binary and plugins) and its version.
GRAPHVIZ_ATTRS = {
    "_dot": attr.label(default = Label("@graphviz//:dot.sh"), allow_single_file = True),
    "_dot_files": attr.label(default = Label("@graphviz//:files")),
    "_dot_version": attr.label(default = Label("@graphviz//:version.txt"), allow_single_file = True),
}

def _exec_path(f):
    return f.path

def _runfiles_path(f):
    return f.short_path

def _report_config(ctx, outputs, methods, path):
    """A report's config: graphviz's files and the program's, each as path(File).

    program_report's action reads it with exec paths; runfiles_report_config writes it with
    runfiles paths, for a `bazel run` target.

    Args:
      ctx: the context of a rule with GRAPHVIZ_ATTRS.
      outputs: the lowering's {role: File}: pte, manifest, graph, selected_ops, and ptd if any.
      methods: {method name: ExportedProgramInfo}.
      path: _exec_path or _runfiles_path.

    Returns:
      (the config dict, a depset of the Files it needs).
    """
    config = {
        "dot": path(ctx.file._dot),
        "dot_version": path(ctx.file._dot_version),
        "graph": path(outputs["graph"]),
        "pte": path(outputs["pte"]),
        "manifest": path(outputs["manifest"]),
        "ptd": path(outputs["ptd"]) if "ptd" in outputs else None,
        "exports": {name: path(exported.manifest) for name, exported in methods.items()},
        "selected_operators": path(outputs["selected_ops"]),
    }
    files = [outputs[role] for role in ("graph", "pte", "manifest", "selected_ops", "ptd") if role in outputs]
    dot_files = depset([ctx.file._dot, ctx.file._dot_version], transitive = [ctx.attr._dot_files.files])
    return config, depset(files + [m.manifest for m in methods.values()], transitive = [dot_files])

def program_report(ctx, outputs, methods, kernels):
    """Declares the ProgramReport action of a program; returns its [html, summary] Files.

    Args:
      ctx: the program rule's context (with GRAPHVIZ_ATTRS).
      outputs: the lowering's {role: File}: pte, manifest, graph, selected_ops, and ptd if any.
      methods: {method name: ExportedProgramInfo}.
      kernels: the kernel libraries' names (built-in names and kernel list labels).

    Returns:
      [<name>.report.html, <name>.report.json].
    """
    html = ctx.actions.declare_file(ctx.label.name + ".report.html")
    summary = ctx.actions.declare_file(ctx.label.name + ".report.json")
    config, inputs = _report_config(ctx, outputs, methods, _exec_path)
    config["kernels"] = kernels
    run_exporter(
        ctx,
        command = "report",
        progress_message = "Drawing the report of {}".format(ctx.label),
        config = config,
        inputs = inputs,
        outputs = {"html": html, "summary": summary},
    )
    return [html, summary]

def runfiles_report_config(ctx, program_target):
    """Writes a report config with runfiles paths, for a `bazel run` target.

    Such a target writes the program's report itself: executorch_profile's --report, with its
    ETDump's times.

    Args:
      ctx: the context of a rule with GRAPHVIZ_ATTRS.
      program_target: the executorch_program target.

    Returns:
      (the config File, the Files it names).
    """
    program = program_target[ExecuTorchProgramInfo]
    graph = program_target[OutputGroupInfo].program_graph.to_list()[0]
    outputs = {"graph": graph, "pte": program.pte, "manifest": program.manifest, "selected_ops": program.selected_ops}
    if program.ptd:
        outputs["ptd"] = program.ptd
    config, files = _report_config(ctx, outputs, program.methods, _runfiles_path)
    config["label"] = str(program.label)
    out = ctx.actions.declare_file(ctx.label.name + ".report_config.json")
    ctx.actions.write(out, json.encode_indent(config) + "\n")
    return out, files.to_list()

def _program_dashboard_impl(ctx):
    where = message_prefix("program_dashboard", ctx.label)
    if not ctx.attr.programs and not ctx.attr.dashboards:
        fail(where + "shows nothing; list programs = [\":<executorch_program>\"] or dashboards = [\"//pkg:dashboard\"]")
    reports, summaries = [], []
    for program in ctx.attr.programs:
        files = getattr(program[OutputGroupInfo], "report", depset()).to_list()
        found = [f for f in files if f.basename.endswith(".report.json")]
        if not found:
            fail(where + "{} has no report (output group report); name executorch_program or llm_program targets".format(program.label))
        summaries += found
        reports += [f for f in files if f.basename.endswith(".report.html")]
    included = [d[ProgramDashboardInfo] for d in ctx.attr.dashboards]
    info = program_dashboard_info(
        reports = depset(reports, transitive = [i.reports for i in included]),
        summaries = depset(summaries, transitive = [i.summaries for i in included]),
        budgets = depset([f for t in ctx.attr.budgets for f in t.files.to_list()], transitive = [i.budgets for i in included]),
        numerics = depset([f for t in ctx.attr.numerics for f in t.files.to_list()], transitive = [i.numerics for i in included]),
        instructions = depset(ctx.files.instructions, transitive = [i.instructions for i in included]),
    )
    html = ctx.actions.declare_file(ctx.label.name + ".html")
    run_exporter(
        ctx,
        command = "dashboard",
        progress_message = "Writing the dashboard {}".format(ctx.label),
        config = {
            "title": str(ctx.label),
            "package": "/".join([p for p in (ctx.label.workspace_root, ctx.label.package) if p]),
            "summaries": [f.path for f in info.summaries.to_list()],
            "budgets": [f.path for f in info.budgets.to_list()],
            "numerics": [f.path for f in info.numerics.to_list()],
            "instructions": [f.path for f in info.instructions.to_list()],
        },
        inputs = depset(transitive = [info.summaries, info.budgets, info.numerics, info.instructions]),
        outputs = {"html": html},
    )

    # The page and the reports it links, so that a test (or a bundle) that takes the dashboard
    # gets pages whose links work.
    return [DefaultInfo(files = depset([html]), runfiles = ctx.runfiles(files = [html], transitive_files = info.reports)), info]

_program_dashboard = rule(
    implementation = _program_dashboard_impl,
    doc = "Writes <name>.html, one page across programs (set up by program_dashboard).",
    attrs = dict(DEADLINE_ATTRS, **{
        "programs": attr.label_list(providers = [ExecuTorchProgramInfo], doc = "The programs to show."),
        "budgets": attr.label_list(allow_files = [".json"], doc = "The program_budget_tests' configs (<test>.config.json)."),
        "numerics": attr.label_list(allow_files = [".json"], doc = "The numerics_tests' configs (<test>.config.json)."),
        "instructions": attr.label_list(allow_files = [".json"], doc = "The program_budget_tests' instruction counts (<test>.instructions.json)."),
        "dashboards": attr.label_list(providers = [ProgramDashboardInfo], doc = "Other program_dashboards to include."),
    }),
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)

def _configs(tests):
    return [t + ".config.json" if ":" in t or t.startswith("//") else ":" + t + ".config.json" for t in tests]

def program_dashboard(name, programs = [], budgets = [], numerics = [], dashboards = [], instructions = [], **kwargs):
    """One page across programs: `<name>.html`, linking each program's report.

    For each program: its size, delegation share, planned memory, and each backend in its
    report's colour with the operators it runs ("XnnpackBackend: 12 of 14 operators in 2
    partitions"; from its report summary, `<program>.report.json`), the headroom its program_budget_tests leave, and the SQNR
    floor its numerics_tests set; then every budget's figures against its limits. The links to
    the reports are relative, so open the page in bazel-bin, where the reports are too (build
    them with `--output_groups=+report`, or build the dashboard, which needs only their summaries).

    Args:
      name: the target's name; the page is <name>.html.
      programs: executorch_program and llm_program targets.
      budgets: program_budget_test targets of those programs.
      numerics: numerics_test targets of those programs.
      dashboards: other program_dashboard targets whose programs, budgets and tests to include,
        e.g. one per package.
      instructions: the instruction counts of budgets with max_instructions, each
        `<test>.instructions.json`: the page shows each method's count against its budget.
      **kwargs: passed to the rule (visibility, tags, ...).
    """
    _program_dashboard(
        name = name,
        programs = programs,
        budgets = _configs(budgets),
        numerics = _configs(numerics),
        dashboards = dashboards,
        instructions = instructions,
        **kwargs
    )
