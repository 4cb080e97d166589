"""bad_target_test: an analysis test that a target fails analysis with every expected fragment.

Analysis-time checks (bad shape specs, bad torch_export attributes) run in-process this way,
without a Bazel inside Bazel; skylib's analysistest turns the failure into a test result.
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")

def _bad_target_test_impl(ctx):
    env = analysistest.begin(ctx)
    for needle in ctx.attr.needles:
        asserts.expect_failure(env, needle)
    return analysistest.end(env)

_bad_target_test = analysistest.make(
    _bad_target_test_impl,
    expect_failure = True,
    attrs = {"needles": attr.string_list(doc = "Fragments the failure message must contain.")},
)

def bad_target_test(name, target, needles, label = None, tags = []):
    """Tests that `target` fails analysis with a message that names it and holds `needles`.

    Args:
      name: the test's name.
      target: ":name" of the bad target in this package; tag it manual.
      needles: fragments the failure message must contain, besides the target's label.
      label: the label the message must name, when a macro's inner target fails in the name
        of the macro's target; default: target's own.
      tags: the test's tags, e.g. the nightly tier's for a target whose analysis fetches gigabytes.
    """
    label = label or "//{}:{}".format(native.package_name(), target.lstrip(":"))
    _bad_target_test(name = name, target_under_test = target, needles = [label] + needles, tags = tags)

def bad_target_test_suite(name, rule, table):
    """Declares every bad target of `table` with its test, and the test_suite `name` of them all.

    Each failing fixture is declared with its test in one row, as skylib's analysis_failure_test
    suites do.

    Args:
      name: the test_suite's name.
      rule: the rule or macro of the bad targets, e.g. shape_spec.
      table: a list of struct(name, attrs, needles): the bad target's name (tagged manual; its
        test is <name>_test), its other attributes, and the fragments its failure must hold.
    """
    for bad in table:
        rule(name = bad.name, tags = ["manual"], **bad.attrs)
        bad_target_test(name = bad.name + "_test", target = ":" + bad.name, needles = bad.needles)
    native.test_suite(name = name, tests = [":" + bad.name + "_test" for bad in table])
