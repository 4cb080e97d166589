"""Unit tests of the Starlark size parser (rules/private/lib/byte_sizes.bzl)."""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")

# These tests read the rules' private files on purpose (bzl-visibility is off for those loads).
load("//rules/private/lib:byte_sizes.bzl", "parse_percent", "parse_size")  # buildifier: disable=bzl-visibility

GOOD = [
    (4, 4),
    ("1000", 1000),
    ("7 B", 7),
    ("3kB", 3000),
    ("3KB", 3000),
    ("1.5MB", 1500000),
    ("2GB", 2000000000),
    ("512KiB", 524288),
    ("512 KiB", 524288),
    ("4MiB", 4194304),
    ("1.5MiB", 1572864),
    ("1.1KiB", 1126),  # 1126.4 bytes: fractions of a byte are dropped
    ("2GiB", 2147483648),
    (" 48MiB ", 50331648),
]

BAD = ["", "MiB", "4 mib", "4mb", "4 MiBs", "1.2.3MB", "-4MiB", ".5MB", "4MiB extra", "0.1B", 0, -3, ["4MiB"], True, None]

def _good_impl(ctx):
    env = unittest.begin(ctx)
    for text, expected in GOOD:
        parsed = parse_size(text)
        asserts.equals(env, None, parsed.error, "parse_size({})".format(repr(text)))
        asserts.equals(env, expected, parsed.bytes, repr(text))
    return unittest.end(env)

def _bad_impl(ctx):
    env = unittest.begin(ctx)
    for value in BAD:
        parsed = parse_size(value)
        asserts.true(env, parsed.error != None and parsed.bytes == None, "{} should be refused".format(repr(value)))
    asserts.true(env, "is not a positive size" in parse_size("0.1B").error)
    asserts.true(env, "powers of 1024" in parse_size("4 mib").error)
    return unittest.end(env)

def _percent_impl(ctx):
    env = unittest.begin(ctx)
    for value, expected in [(0, 0.0), (2, 2.0), ("2.5", 2.5), ("10", 10.0)]:
        parsed = parse_percent(value)
        asserts.equals(env, None, parsed.error, repr(value))
        asserts.equals(env, expected, parsed.percent, repr(value))
    for value in [-1, "two", "", "1.2.3", None, [2]]:
        asserts.true(env, parse_percent(value).error != None, "{} should be refused".format(repr(value)))
    return unittest.end(env)

good_test = unittest.make(_good_impl)
bad_test = unittest.make(_bad_impl)
percent_test = unittest.make(_percent_impl)

def sizes_test_suite(name):
    unittest.suite(name, good_test, bad_test, percent_test)
