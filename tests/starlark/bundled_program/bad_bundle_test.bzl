"""bad_bundle_test: a bundled_program (or bundled_program_test) that must fail analysis."""

load("//rules:defs.bzl", "bundled_program", "bundled_program_test")
load("//tests/starlark:bad_target_test.bzl", "bad_target_test")

def bad_bundle_test(name, needles, program, **attrs):
    """Declares a bad bundled_program `name` (manual) and `<name>_test`, which checks it.

    The test checks that the bundle fails analysis with a message that names it and holds
    every needle.

    Args:
      name: the bad bundle's name.
      needles: fragments the failure message must contain.
      program: the executorch_program to bundle.
      **attrs: the bundled_program's bad attributes.
    """
    bundled_program(name = name, program = program, tags = ["manual"], **attrs)
    bad_target_test(name = name + "_test", needles = ["bundled_program "] + needles, target = ":" + name)

def bad_bundle_check_test(name, needles, bundle, **attrs):
    """The same for a bundled_program_test, whose message names the test."""
    bundled_program_test(name = name, bundle = bundle, tags = ["manual"], **attrs)
    bad_target_test(
        name = name + "_test",
        label = "//{}:{}".format(native.package_name(), name),
        needles = ["bundled_program_test "] + needles,
        target = ":" + name,
    )
