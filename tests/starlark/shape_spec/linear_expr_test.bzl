"""Unit tests of the Starlark size-expression parser (rules/private/lib/linear_expr.bzl)."""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")

# These tests read the rules' private files on purpose (bzl-visibility is off for those loads).
load("//rules/private/lib:linear_expr.bzl", "format_linear", "is_identifier", "parse_linear")  # buildifier: disable=bzl-visibility
load(":expressions.bzl", "ANALYSIS_ONLY", "BAD", "GOOD")

def _good_impl(ctx):
    env = unittest.begin(ctx)
    for text, expected in GOOD:
        parsed = parse_linear(text)
        asserts.equals(env, None, parsed.error, "parse_linear({})".format(repr(text)))
        asserts.equals(env, expected, (parsed.name, parsed.a, parsed.b), repr(text))
    return unittest.end(env)

def _bad_impl(ctx):
    env = unittest.begin(ctx)
    for text in BAD + ANALYSIS_ONLY:
        asserts.true(env, parse_linear(text).error != None, "{} should be refused".format(repr(text)))
    asserts.true(env, "non-linear" in parse_linear("n*n").error)
    asserts.true(env, "several dims (a, b)" in parse_linear("a+b").error)
    asserts.true(env, "coefficient 0" in parse_linear("n-n").error)
    asserts.true(env, "no dim name" in parse_linear("2").error)
    asserts.true(env, "parentheses" in parse_linear("2*(n+1)").error)
    return unittest.end(env)

def _format_impl(ctx):
    env = unittest.begin(ctx)
    for _, (name, a, b) in GOOD:
        canonical = format_linear(name, a, b)
        reparsed = parse_linear(canonical)
        asserts.equals(env, (name, a, b), (reparsed.name, reparsed.a, reparsed.b), canonical)
    asserts.equals(env, "4*dx-2", format_linear("dx", 4, -2))
    asserts.equals(env, "dx+1", format_linear("dx", 1, 1))
    asserts.true(env, is_identifier("batch_2"))
    asserts.false(env, is_identifier("2batch"))
    asserts.false(env, is_identifier("my-dim"))
    return unittest.end(env)

good_test = unittest.make(_good_impl)
bad_test = unittest.make(_bad_impl)
format_test = unittest.make(_format_impl)

def linear_expr_test_suite(name):
    unittest.suite(name, good_test, bad_test, format_test)
