"""foundation_budget_test: the bytes an app ships for programs that share a foundation's
weights, against the same programs stand-alone (exporter/checks/shared_budget.py)."""

load("//rules:providers.bzl", "ExecuTorchProgramInfo", "FoundationWeightsInfo")
load("//rules/private/lib:attr_checks.bzl", "number_attr", "parse_number")
load("//rules/private/lib:exporter_py.bzl", "EXPORTER_MODULES")
load(":config_test.bzl", "config_target_attrs", "config_test_attrs", "config_test_rule", "test_prefix", "write_test_config")

def _models(program):
    return sorted({str(m.model.label): None for m in program.methods.values()}.keys())

def _pair(where, foundation, shared, alone):
    """Checks one pair: `shared` ships with the foundation, `alone` is the same model without it."""
    if shared.foundation == None and shared.label != foundation.program.label:
        fail(where + "{} does not share {}'s weights; name programs built with foundation = \"{}\" (or its program, {})".format(shared.label, foundation.label, foundation.label, foundation.program.label))
    if shared.foundation != None and shared.foundation.label != foundation.label:
        fail(where + "{} shares the weights of {}, not of {}; name it in that foundation's test".format(shared.label, shared.foundation.label, foundation.label))
    if alone.foundation != None:
        fail(where + "{} is to stand alone, but shares the weights of {}; name a program built without foundation".format(alone.label, alone.foundation.label))
    if _models(shared) != _models(alone):
        fail(where + "{} is lowered from {} but its stand-alone counterpart {} from {}; pair each program with one of the same model".format(shared.label, _models(shared), alone.label, _models(alone)))

def _test_impl(ctx):
    where = test_prefix("foundation_budget_test", ctx)
    foundation = ctx.attr.foundation[FoundationWeightsInfo]
    if not ctx.attr.programs:
        fail(where + "programs is empty; map each program that shares the foundation to its stand-alone program, e.g. {\":poet_llm\": \":poet_standalone_llm\"}")
    max_ratio = parse_number(where, "max_ratio", ctx.attr.max_ratio, what = "a ratio of bytes", example = "0.5", at_most = 1)
    if not max_ratio:
        fail(where + "max_ratio is not set; set the largest shipped / stand-alone ratio to accept, e.g. 0.5")
    if len(ctx.attr.standalone_index) != len({i: None for i in ctx.attr.standalone_index}):
        fail(where + "programs maps two programs to one stand-alone program; give each its own")
    pairs, files = [], [foundation.ptd]
    for shared_target, index in zip(ctx.attr.programs, ctx.attr.standalone_index):
        shared, alone = shared_target[ExecuTorchProgramInfo], ctx.attr.standalone[index][ExecuTorchProgramInfo]
        _pair(where, foundation, shared, alone)
        pairs.append({
            "program": str(shared.label),
            "pte": shared.pte.short_path,
            "standalone": str(alone.label),
            "standalone_files": [f.short_path for f in [alone.pte] + ([alone.ptd] if alone.ptd else [])],
        })
        files += [shared.pte, alone.pte] + ([alone.ptd] if alone.ptd else [])
    config = {
        "label": ctx.attr.test_label,
        "foundation": str(foundation.label),
        "ptd": foundation.ptd.short_path,
        "pairs": pairs,
        "max_ratio": max_ratio,
    }
    return write_test_config(ctx, config, files)

_foundation_budget_test = config_test_rule(
    implementation = _test_impl,
    doc = "The rule behind foundation_budget_test: it checks the programs and writes the JSON config that exporter/checks/shared_budget.py reads and the launcher that runs it.",
    attrs = config_test_attrs({
        "foundation": attr.label(mandatory = True, providers = [FoundationWeightsInfo], doc = "The foundation_weights."),
        "programs": attr.label_list(mandatory = True, providers = [ExecuTorchProgramInfo], doc = "The programs that share it (set by the macro)."),
        "standalone": attr.label_list(mandatory = True, providers = [ExecuTorchProgramInfo], doc = "The stand-alone programs, each once (set by the macro)."),
        "standalone_index": attr.int_list(doc = "For each of programs, the index of its stand-alone program in standalone (set by the macro)."),
        "max_ratio": attr.string(doc = "The largest shipped / stand-alone ratio (set by the macro)."),
    }),
)

def foundation_budget_test(name, foundation, programs, max_ratio, **kwargs):
    """Tests what sharing a foundation saves: the bytes an app ships, against stand-alone programs.

    Shipped: the foundation's .ptd once, plus each program's .pte. Stand-alone: each program's
    stand-alone counterpart (the same model lowered without foundation), .pte plus .ptd if it
    has one. The test fails when shipped / stand-alone is over max_ratio, and prints both
    totals for every prefix of the programs (the base alone, then one adapter more at a time),
    so the report shows how the saving grows with N.

    Args:
      name: the test's name.
      foundation: the foundation_weights target.
      programs: {program built with foundation = <foundation> (or the foundation's own program):
        the stand-alone program of the same model}, in the order to add them.
      max_ratio: the largest shipped / stand-alone ratio to accept, a number in (0, 1], e.g. 0.5.
      **kwargs: passed to the test (tags, size, timeout, ...).
    """
    alone = []  # a label_list takes each label once; the rule says if two programs share one
    for label in programs.values():
        if label not in alone:
            alone.append(label)
    kwargs.setdefault("size", "small")  # it reads file sizes
    _foundation_budget_test(
        foundation = foundation,
        programs = list(programs.keys()),
        standalone = alone,
        standalone_index = [alone.index(label) for label in programs.values()],
        max_ratio = number_attr(max_ratio),
        **config_target_attrs(name, EXPORTER_MODULES["shared_budget"], kwargs)
    )
