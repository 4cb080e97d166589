"""Unit tests: an OpenVINO program's exporter actions are no-remote, other backends' are not.

An OpenVINO delegate is compiled for the lowering machine's CPU (docs/caching.md, "Per-machine
programs"), so its actions must stay out of remote caches. Bazel 4.2.3 shows an action's
execution_info to analysistest only with --experimental_google_legacy_api, so these test the two
functions lower_program joins: per_machine(backends) and execution_requirements(...).
"""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")

# These tests read the rules' private files on purpose (bzl-visibility is off for those loads).
load("//rules/private:backends.bzl", "per_machine")  # buildifier: disable=bzl-visibility
load("//rules/private/lib:exporter_action.bzl", "execution_requirements")  # buildifier: disable=bzl-visibility

_TOOLCHAIN = struct(worker_requirements = {"supports-multiplex-workers": "1"})

def _requirements(backends):
    # As lower_program asks for the lowering of a program of these backends.
    return execution_requirements(_TOOLCHAIN, "lower", True, per_machine(backends))

def _openvino_impl(ctx):
    env = unittest.begin(ctx)
    for backends in (["openvino"], ["xnnpack", "openvino"]):
        found = _requirements(backends)
        asserts.true(env, "no-remote" in found, "{}: {}".format(backends, found))
        asserts.true(env, "block-network" in found and "worker-key-mnemonic" in found, str(found))
    return unittest.end(env)

def _others_impl(ctx):
    env = unittest.begin(ctx)
    for backends in ([], ["xnnpack"], ["coreml"], ["tosa"], ["ethos_u"]):
        found = _requirements(backends)
        asserts.false(env, "no-remote" in found, "{}: {}".format(backends, found))
        asserts.false(env, "no-remote-exec" in found, "{}: {}".format(backends, found))
    return unittest.end(env)

openvino_test = unittest.make(_openvino_impl)
others_test = unittest.make(_others_impl)

def per_machine_test_suite(name):
    unittest.suite(name, openvino_test, others_test)
