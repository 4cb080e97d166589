"""llm_ops_test: an analysis test of the llm_ops an export resolved (its ExportedProgramInfo's options)."""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")
load("//rules:defs.bzl", "llm_program")
load("//rules:providers.bzl", "ExportedProgramInfo")

def _llm_ops_test_impl(ctx):
    env = analysistest.begin(ctx)
    exported = analysistest.target_under_test(env)[ExportedProgramInfo]
    asserts.equals(env, ctx.attr.expected, exported.options.get("llm_ops", []), "llm_ops of " + str(exported.label))
    return analysistest.end(env)

_llm_ops_test = analysistest.make(
    _llm_ops_test_impl,
    attrs = {"expected": attr.string_list(doc = "The llm_ops the export resolved ([] for none).")},
)

def llm_ops_test(name, target, expected):
    """Tests that the export `target` (an llm_program's <name>_ep, tagged manual) resolved `expected`."""
    _llm_ops_test(name = name, target_under_test = target, expected = expected)

def llm_ops_default_tests(name, cases, tokenizer):
    """Per case, an llm_program (manual: only its export is analysed) and the llm_ops_test of its export.

    Args:
      name: the test_suite of those tests.
      cases: {name: (model, llm_program's other arguments, the llm_ops its export resolves)}.
      tokenizer: the programs' tokenizer.
    """
    for case, (model, kwargs, expected) in cases.items():
        llm_program(name = case, max_seq_len = 32, model = model, tags = ["manual"], tokenizer = tokenizer, **kwargs)
        llm_ops_test(name = case + "_test", target = ":" + case + "_ep", expected = expected)
    native.test_suite(name = name, tests = [":" + case + "_test" for case in cases])
