"""bad_budget_test: a program_budget_test that must fail analysis, and the test that says so."""

load("//rules:defs.bzl", "program_budget_test")
load("//tests/starlark:bad_target_test.bzl", "bad_target_test")

def bad_budget_test(name, needles, program, **attrs):
    """Declares a bad program_budget_test `name` (manual) and `<name>_test`, which checks it.

    The test checks that the budget fails analysis with a message that names `name` and holds
    every needle.

    Args:
      name: the bad test's name.
      needles: fragments the failure message must contain.
      program: the executorch_program the budget is for.
      **attrs: the program_budget_test's bad attributes.
    """
    program_budget_test(name = name, program = program, tags = ["manual"], **attrs)
    bad_target_test(
        name = name + "_test",
        label = "//{}:{}".format(native.package_name(), name),
        needles = ["program_budget_test "] + needles,
        target = ":" + name,
    )
