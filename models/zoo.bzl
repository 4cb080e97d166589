"""zoo_package: the last call of every BUILD file in the model zoo that declares models or programs.

The zoo's rule: every model has a graph snapshot test, and every program a numerics test, a
budget and a report. A zoo package is the usual blocks, one per model:

    torch_model(name = "gru", ...)
    torch_export(name = "gru_ep", model = ":gru", ...)
    executorch_program(name = "gru_pte", exported = ":gru_ep", ...)
    graph_snapshot_test(name = "gru_graph_test", exported = ":gru_ep", golden = "gru.graph.txt")
    numerics_test(name = "gru_numerics_test", program = ":gru_pte")
    program_budget_test(name = "gru_pte_budget_test", program = ":gru_pte", ...)

then, last, `zoo_package()`, which reads what the package declared (native.existing_rules) and
adds three targets:

- `zoo_test`: fails, naming what is missing and what to add, unless every torch_model (and
  lora_model) of the package is snapshotted (a graph_snapshot_test of one of its exports or
  programs; a quantized program counts for the model it was exported from), every
  executorch_program not tagged manual has the checks its backends can run here (docs/backends.md):
  for XNNPACK and the portable runtime a numerics_test that also runs it on arm64, under qemu
  (`runtimes = ["python", "native", "arm64"]`, docs/native.md), for OpenVINO a numerics_test
  (`runtimes = ["python", "native"]`), for TOSA and Ethos-U one in the TOSA reference model
  (`runtimes = ["tosa_reference"]`), for Core ML, which runs on Apple hardware only, a
  delegate_structure_test; and every program has a program_budget_test and a report on the
  package's dashboard, and every foundation_weights has a foundation_budget_test. Tests tagged manual do not count. Its runfiles hold every report, so
  testing it builds them.
- `update_goldens`: `bazel run` it to rewrite the package's snapshot and budget goldens
  (//:update_goldens runs every package's).
- `dashboard`: a program_dashboard of the package's programs with their budgets and numerics
  tests (//models:report includes every package's).

//models:zoo_packages_test checks that every BUILD file under models/ that declares a model or a
program ends with zoo_package(), and that //:update_goldens names its update_goldens and
//models:report its dashboard.
"""

load(
    "//rules:defs.bzl",
    "ExecuTorchProgramInfo",
    "ExportedProgramInfo",
    "FoundationWeightsInfo",
    "ProgramDashboardInfo",
    "TorchModelInfo",
    "graph_snapshot_updates",
    "program_dashboard",
)

# buildifier: disable=bzl-visibility
# The zoo is this repository's own: it asks the rules' own table where a program runs.
load("//rules/private:backends.bzl", "reference_runtimes", "runtimes_here")

# buildifier: disable=bzl-visibility
load("//rules/private/lib:llm_ops_runtimes.bzl", "llm_ops_of")
load("//tools/ci:tiers.bzl", "NIGHTLY")

# The kinds (rule names) native.existing_rules() reports for what the zoo rule counts: the rules
# behind torch_model, lora_model, hf_model, executorch_program, llm_program and foundation_weights, and the
# test rules of graph_snapshot_test, numerics_test, program_budget_test and
# foundation_budget_test, with the attribute naming what each tests. zoo_test fails if it finds
# no model and no program, so a renamed kind cannot make it pass on nothing.
_MODEL_KINDS = ["torch_model_rule", "lora_model_rule", "hf_model_rule"]
_PROGRAM_KINDS = ["executorch_program_rule", "llm_program_rule", "multimodal_program_rule"]
_FOUNDATION_KIND = "foundation_weights"
_SNAPSHOT_KIND = "_snapshot_test"
_NUMERICS_KIND = "_numerics_test"
_STRUCTURE_KIND = "_delegate_structure_test"
_BUDGET_KIND = "_budget_test"
_FOUNDATION_BUDGET_KIND = "_foundation_budget_test"

def _labels(infos):
    return sorted({str(info.label): True for info in infos}.keys())

def _report_problems(ctx):
    """Each program without a report on the package's dashboard, one sentence each."""
    shown = {f: True for f in ctx.attr.dashboard[ProgramDashboardInfo].summaries.to_list()} if ctx.attr.dashboard else {}
    problems = []
    for program in ctx.attr.programs:
        report = getattr(program[OutputGroupInfo], "report", depset()).to_list()
        summaries = [f for f in report if f.basename.endswith(".report.json")]
        if not summaries:
            problems.append("executorch_program {} has no report (output group report); lower it with executorch_program or llm_program".format(program.label))
        elif summaries[0] not in shown:
            problems.append("executorch_program {} is not on the package's dashboard; add it to the programs of zoo_test's dashboard (zoo_package() does)".format(program.label))
    return problems

# Where the portable runtime (backends = []) runs: every runtime of a numerics_test.
_PORTABLE_RUNTIMES = runtimes_here([])

def _checked_in(backends):
    """Where zoo_test wants a program of `backends` run.

    runtimes_here, or for Arm's backends, which no ExecuTorch runtime here runs, the TOSA
    reference model (their first reference runtime).
    """
    runtimes = runtimes_here(backends)
    if runtimes:
        return runtimes
    reference = [reference_runtimes(name)[0] for name in backends if reference_runtimes(name)]
    return reference[:1]

def _runs_in(program):
    """_checked_in of a program's backends, without arm64 for a program with llm_ops.

    Their kernels need an aarch64 libtorch there (rules/private/lib/llm_ops_runtimes.bzl).
    """
    runtimes = _checked_in(program.backends)
    return [r for r in runtimes if r != "arm64"] if llm_ops_of(program) else runtimes

def _program_problems(program, runtimes, with_numerics, on_arm64, structured, exempt):
    """What one program lacks of the checks its backends can run here, one sentence each.

    runtimes: where a program of its backends runs here (_checked_in): all three
    for XNNPACK and the portable runtime, python for OpenVINO, tosa_reference for TOSA and
    Ethos-U, none for Core ML, whose programs get a delegate_structure_test instead.
    """
    if not runtimes:
        if program in structured:
            return []
        return ["executorch_program {} runs on Apple hardware only, so no numerics_test can run it here; add delegate_structure_test(name = \"<program>_structure_test\", program = \"{}\")".format(program, program)]
    if program not in with_numerics and program not in exempt:
        fix = "" if runtimes == _PORTABLE_RUNTIMES else ", runtimes = {}".format(runtimes)
        return ["executorch_program {} has no numerics_test; add numerics_test(name = \"<program>_numerics_test\", program = \"{}\"{}), or, if the host's ExecuTorch runtime cannot run it, zoo_package(no_numerics = {{\"{}\": \"<why>\"}})".format(program, program, fix, program.partition(":")[2])]
    if program in with_numerics and "arm64" in runtimes and program not in on_arm64:
        return ["executorch_program {} has no arm64 run; add \"arm64\" to the runtimes of its numerics_test (runtimes = [\"python\", \"native\", \"arm64\"]), with arm64_inputs = [<smaller cases>] if emulation makes its cases too slow".format(program)]
    return []

def _problems(ctx):
    """What the package lacks, one sentence each; [] when it keeps the zoo's rule."""
    models = _labels([m[TorchModelInfo] for m in ctx.attr.models])
    programs = _labels([p[ExecuTorchProgramInfo] for p in ctx.attr.programs])
    snapshotted = {}
    for subject in ctx.attr.snapshots:
        if ExecuTorchProgramInfo in subject:
            for method in subject[ExecuTorchProgramInfo].methods.values():
                snapshotted[str(method.model.label)] = True
        else:
            snapshotted[str(subject[ExportedProgramInfo].model.label)] = True
    with_numerics = _labels([p[ExecuTorchProgramInfo] for p in ctx.attr.numerics])
    on_arm64 = _labels([p[ExecuTorchProgramInfo] for p in ctx.attr.arm64])
    with_budget = _labels([p[ExecuTorchProgramInfo] for p in ctx.attr.budgets])
    structured = _labels([p[ExecuTorchProgramInfo] for p in ctx.attr.structures])
    runs_in = {str(p[ExecuTorchProgramInfo].label): _runs_in(p[ExecuTorchProgramInfo]) for p in ctx.attr.programs}
    foundations = _labels([f[FoundationWeightsInfo] for f in ctx.attr.foundations])
    with_foundation_budget = _labels([f[FoundationWeightsInfo] for f in ctx.attr.foundation_budgets])
    exempt = {
        name if name.startswith("//") else "//{}:{}".format(ctx.label.package, name): why
        for name, why in ctx.attr.no_numerics.items()
    }

    problems = []
    if not models and not programs:
        problems.append("found no torch_model and no executorch_program in //{}; remove zoo_package(), or see models/zoo.bzl's _MODEL_KINDS if the rules were renamed".format(ctx.label.package))
    for model in models:
        if model not in snapshotted:
            problems.append("torch_model {} has no graph_snapshot_test; add graph_snapshot_test(name = \"<model>_graph_test\", exported = \":<a torch_export of it>\", golden = \"<model>.graph.txt\") (or program = an executorch_program of it), then `bazel run` its .update".format(model))
    for program in programs:
        problems += _program_problems(program, runs_in[program], with_numerics, on_arm64, structured, exempt)
        if program not in with_budget:
            problems.append("executorch_program {} has no program_budget_test; add program_budget_test(name = \"<program>_budget_test\", program = \"{}\", golden = \"<program>.budget.json\", max_growth_percent = 2, ...), then `bazel run` its .update".format(program, program))
    for foundation in foundations:
        if foundation not in with_foundation_budget:
            problems.append("foundation_weights {} has no foundation_budget_test; add foundation_budget_test(name = \"<foundation>_budget_test\", foundation = \"{}\", programs = {{<program that shares it>: <the same model stand-alone>, ...}}, max_ratio = ...)".format(foundation, foundation))
    for program, why in sorted(exempt.items()):
        if program not in programs:
            problems.append("zoo_package(no_numerics) names {}, which is not an executorch_program of //{} (or is tagged manual); remove it".format(program, ctx.label.package))
        elif program in with_numerics:
            problems.append("zoo_package(no_numerics) names {}, which has a numerics_test; remove it from no_numerics".format(program))
        elif not why.strip():
            problems.append("zoo_package(no_numerics) gives no reason for {}; say why the host cannot run it".format(program))
    return models, programs, sorted(exempt.items()), problems + _report_problems(ctx)

def _structure_text(ctx, programs):
    """"; ... instead of numerics: <programs>" for the programs only a structure check checks."""
    checked = [p for p in _labels([s[ExecuTorchProgramInfo] for s in ctx.attr.structures]) if p in programs]
    return "; Core ML (Apple hardware only), a delegate_structure_test instead of numerics: " + ", ".join(checked) if checked else ""

def _zoo_test_impl(ctx):
    models, programs, exempt, problems = _problems(ctx)
    if problems:
        report = ["//{} breaks the zoo's rule (every model snapshotted, every program with a numerics test (a structure check for Core ML), a budget and a report):".format(ctx.label.package)]
        report += ["- " + p for p in problems]
    else:
        report = ["//{}: keeps the zoo's rule: {} model(s), each snapshotted; {} program(s), each with a budget, a numerics test and a report{}{}.".format(
            ctx.label.package,
            len(models),
            len(programs),
            "".join(["; {} has no numerics test: {}".format(p, why) for p, why in exempt]),
            _structure_text(ctx, programs),
        )]
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(
        script,
        "#!/bin/sh\ncat <<'REPORT'\n{}\nREPORT\nexit {}\n".format("\n".join(report), 1 if problems else 0),
        is_executable = True,
    )
    reports = [getattr(p[OutputGroupInfo], "report", depset()) for p in ctx.attr.programs]
    return [DefaultInfo(executable = script, files = depset([script]), runfiles = ctx.runfiles(transitive_files = depset(transitive = reports)))]

zoo_rule_test = rule(
    implementation = _zoo_test_impl,
    test = True,
    doc = "Checks the zoo's rule over what its attributes list: zoo_package lists its package's " +
          "targets; //tests/starlark/zoo_rule_test gives it broken lists.",
    attrs = {
        "models": attr.label_list(providers = [TorchModelInfo], doc = "The package's torch_model targets."),
        "programs": attr.label_list(providers = [ExecuTorchProgramInfo], doc = "Its executorch_program targets not tagged manual."),
        "snapshots": attr.label_list(
            providers = [[ExportedProgramInfo], [ExecuTorchProgramInfo]],
            doc = "What its graph_snapshot_tests snapshot.",
        ),
        "numerics": attr.label_list(providers = [ExecuTorchProgramInfo], doc = "The programs its numerics_tests run."),
        "arm64": attr.label_list(providers = [ExecuTorchProgramInfo], doc = "The programs its numerics_tests also run on arm64."),
        "budgets": attr.label_list(providers = [ExecuTorchProgramInfo], doc = "The programs its program_budget_tests budget."),
        "structures": attr.label_list(providers = [ExecuTorchProgramInfo], doc = "The programs its delegate_structure_tests check."),
        "foundations": attr.label_list(providers = [FoundationWeightsInfo], doc = "Its foundation_weights targets not tagged manual."),
        "foundation_budgets": attr.label_list(providers = [FoundationWeightsInfo], doc = "The foundations its foundation_budget_tests measure."),
        "no_numerics": attr.string_dict(doc = "Program name (or label) -> why the host cannot run it."),
        "dashboard": attr.label(providers = [ProgramDashboardInfo], doc = "The package's program_dashboard, which must show every program's report."),
    },
)

def _absolute(label):
    """A label as a BUILD file wrote it (":x", "x", "//pkg:x"), made absolute for this package."""
    if label.startswith("//") or label.startswith("@"):
        return label
    return "//{}:{}".format(native.package_name(), label.lstrip(":"))

def _of(rules, *kinds):
    return [r for r in rules if r["kind"] in kinds]

def _distinct(labels):
    return sorted({_absolute(label): True for label in labels if label}.keys())

def zoo_package(no_numerics = {}, **kwargs):
    """Declares zoo_test, update_goldens and dashboard for this package; call it last.

    Programs tagged NIGHTLY (tools/ci/tiers.bzl) stay out of them, so every CI run builds none
    of them; when the package has some, the same three come again, prefixed nightly_ and
    tagged NIGHTLY, over all of the package's programs.

    Args:
      no_numerics: {program name: why}: programs the host's ExecuTorch runtime cannot run, so
        they have no numerics_test (say why, and what checks them instead).
      **kwargs: passed to every target it declares (visibility, ...).
    """
    rules = native.existing_rules().values()
    every_build = [r for r in rules if "manual" not in (r.get("tags") or [])]
    nightly = [r for r in rules if "nightly" in (r.get("tags") or [])]
    nightly_programs = [r["name"] for r in _of(nightly, *_PROGRAM_KINDS)]
    _zoo_targets("", every_build, {p: why for p, why in no_numerics.items() if p not in nightly_programs}, kwargs)
    if nightly:
        _zoo_targets("nightly_", every_build + nightly, no_numerics, dict(kwargs, tags = NIGHTLY + kwargs.get("tags", [])))

def _zoo_targets(prefix, rules, no_numerics, kwargs):
    """zoo_test, dashboard and update_goldens (each name prefixed) over these rules."""
    snapshots = _of(rules, _SNAPSHOT_KIND)
    budgets = _of(rules, _BUDGET_KIND)
    numerics = _of(rules, _NUMERICS_KIND)
    programs = _distinct([r["name"] for r in _of(rules, *_PROGRAM_KINDS)])
    dashboard = prefix + "dashboard"
    if programs:
        program_dashboard(
            name = dashboard,
            programs = programs,
            budgets = [":" + r["name"] for r in budgets],
            numerics = [":" + r["name"] for r in numerics],
            instructions = [":" + r["name"] + ".instructions.json" for r in budgets if r.get("instructions_file")],
            **kwargs
        )
    zoo_rule_test(
        name = prefix + "zoo_test",
        models = _distinct([r["name"] for r in _of(rules, *_MODEL_KINDS)]),
        programs = programs,
        dashboard = ":" + dashboard if programs else None,
        snapshots = _distinct([r.get("exported") or r.get("program") for r in snapshots]),
        numerics = _distinct([r["program"] for r in numerics]),
        arm64 = _distinct([r["program"] for r in numerics if "arm64" in (r.get("runtimes") or [])]),
        budgets = _distinct([r["program"] for r in budgets]),
        structures = _distinct([r["program"] for r in _of(rules, _STRUCTURE_KIND)]),
        foundations = _distinct([r["name"] for r in _of(rules, _FOUNDATION_KIND)]),
        foundation_budgets = _distinct([r["foundation"] for r in _of(rules, _FOUNDATION_BUDGET_KIND)]),
        no_numerics = no_numerics,
        size = "small",
        **kwargs
    )

    # Every test with a golden.
    goldens = [r["name"] for r in snapshots] + [r["name"] for r in budgets if r.get("golden_path")]
    if not goldens:
        return  # zoo_test says what to add; graph_snapshot_updates would refuse an empty list
    graph_snapshot_updates(
        name = prefix + "update_goldens",
        tests = sorted([":" + name for name in goldens]),
        **kwargs
    )
