"""Every bad foundation_weights fails analysis with one message that names it and the fix."""

load("//rules:defs.bzl", "foundation_weights")
load("//tests/starlark:bad_target_test.bzl", "bad_target_test_suite")

# name: the bad foundation (its test is <name>_test); attrs: its arguments; needles: fragments
# its failure message must hold besides its label.
BAD_FOUNDATIONS = [
    struct(
        name = "weights_inline",
        attrs = dict(program = "//tests/starlark:double_pte"),
        needles = ["program //tests/starlark:double_pte keeps its weights in its .pte; set weights = \"external\" on it"],
    ),
    struct(
        name = "weights_of_another_foundation",
        attrs = dict(program = "//tests/starlark:double_shared_pte"),
        needles = ["program //tests/starlark:double_shared_pte shares the weights of //tests/starlark:double_foundation; name a program whose weights are its own"],
    ),
]

def bad_foundation_test_suite(name):
    """Declares every bad foundation of BAD_FOUNDATIONS with its test, and the test_suite `name`."""
    bad_target_test_suite(name, foundation_weights, BAD_FOUNDATIONS)
