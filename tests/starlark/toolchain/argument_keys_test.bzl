"""Unit tests: torch_export_toolchain_repositories refuses a per-release or per-backend key that
names nothing it replaces, instead of ignoring it (toolchain/argument_keys.bzl)."""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")
load("//exporter:lock_facts.bzl", "BACKEND_LOCKS", "RELEASE_LOCKS")
load("//toolchain:argument_keys.bzl", "unknown_keys_error")

def _known_keys_pass_impl(ctx):
    env = unittest.begin(ctx)
    asserts.equals(env, None, unknown_keys_error("release_locks", {"1.4": "//:a.lock", "1.3": "//:b.lock"}, RELEASE_LOCKS.values()))
    asserts.equals(env, None, unknown_keys_error("backend_locks", {"arm": "//:a.lock"}, BACKEND_LOCKS.keys()))
    asserts.equals(env, None, unknown_keys_error("release_locks", {}, RELEASE_LOCKS.values()))
    return unittest.end(env)

def _unknown_keys_fail_impl(ctx):
    env = unittest.begin(ctx)
    error = unknown_keys_error("release_locks", {"1.5": "//:a.lock", "1.4": "//:b.lock"}, RELEASE_LOCKS.values())
    asserts.equals(env, "rules_torch_export: torch_export_toolchain_repositories' release_locks has \"1.5\", which it does not take; its keys are \"1.3\", \"1.4\" (the toolchain's own release is replaced by `lock`)", error)
    error = unknown_keys_error("backend_locks", {"tosa": "//:a.lock"}, BACKEND_LOCKS.keys())
    asserts.equals(env, "rules_torch_export: torch_export_toolchain_repositories' backend_locks has \"tosa\", which it does not take; its keys are \"arm\", \"openvino\"", error)
    return unittest.end(env)

known_keys_pass_test = unittest.make(_known_keys_pass_impl)
unknown_keys_fail_test = unittest.make(_unknown_keys_fail_impl)

def argument_keys_test_suite(name):
    unittest.suite(name, known_keys_pass_test, unknown_keys_fail_test)
