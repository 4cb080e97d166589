"""hints_test: the AUTO, DYNAMIC and STATIC a BUILD file loads are the exporter's hints."""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")
load("//exporter:exporter_facts.bzl", "HINTS")
load("//rules:defs.bzl", "AUTO", "DYNAMIC", "STATIC")

def _hints_impl(ctx):
    env = unittest.begin(ctx)
    asserts.equals(env, HINTS, [AUTO, DYNAMIC, STATIC])
    return unittest.end(env)

hints_test = unittest.make(_hints_impl)
