"""executorch_programs: one executorch_program (and its numerics_test) per device class."""

load("//exporter:exporter_facts.bzl", "BACKEND_RECORDS")
load("//rules/private/testing:numerics_test.bzl", "numerics_test")
load(":backends.bzl", "backend_name", "runs_only_on", "runtimes_here")
load(":executorch_program.bzl", "executorch_program")

def _where(name):
    """The message prefix naming the macro's target: "executorch_programs //pkg:name: "."""
    return "executorch_programs //{}:{}: ".format(native.package_name(), name)

def _runs_nowhere_here(backends):
    """The first of `backends` (a list, or one per method) that no runtime here runs, or None."""
    values = [v for listed in backends.values() for v in listed] if type(backends) == "dict" else backends
    names = [backend_name(v) for v in values if backend_name(v) in BACKEND_RECORDS and not runtimes_here([backend_name(v)])]
    return names[0] if names else None

def _numerics_tests(name, program, variant, settings, attrs, numerics, kwargs):
    """Declares a variant's numerics_tests (none with "numerics": None); returns their labels."""
    nowhere = _runs_nowhere_here(attrs.get("backends", kwargs.get("backends", [])))
    if settings.get("numerics", {}) == None:
        return []
    if nowhere:
        fail(_where(name) + "variant {} is lowered for {}, which runs on {} only; set \"numerics\": None in that variant and test the program on the device".format(repr(variant), nowhere, runs_only_on(nowhere)))
    test_args = dict(numerics, **settings.get("numerics", {}))
    if attrs.get("release") and "release" not in test_args:  # the variant's program runs in its own release
        test_args["release"] = attrs["release"]
    method_names = sorted(attrs["methods"].keys()) if attrs["methods"] else ["forward"]
    if "steps" in test_args:  # one test calls the methods its steps name, in order
        method_names = ["forward"]
    tests = []
    for method in method_names:
        test = "{}_{}numerics_test".format(program, "" if method == "forward" else method + "_")
        numerics_test(name = test, program = ":" + program, method = method, **dict(kwargs, **test_args))
        tests.append(":" + test)
    return tests

_PROGRAM_KEYS = ["backends", "exported", "initialized_buffers", "kernels", "methods", "metadata", "release", "summary", "weights"]

def executorch_programs(name, variants, exported = None, methods = None, metadata = {}, numerics = {}, release = None, **kwargs):
    """Lowers one export per variant: <name>_<variant> for each, their tests, and a test_suite.

    For each variant this makes the executorch_program `<name>_<variant>` and the numerics_test
    `<name>_<variant>_numerics_test` (on every method), and `<name>` is a test_suite of those
    tests: `bazel test //pkg:<name>` (a filegroup of the programs when every variant sets
    "numerics": None).

    Args:
      name: the prefix of every target, and the test_suite's name.
      variants: {variant name: {attribute: value}}; a variant may set backends, exported (e.g.
        a torch_quantize), methods, metadata, weights, summary and release (the ExecuTorch release
        whose runtime loads it: an app's two releases get a program each, tested each in its
        own runtimes; docs/compatibility.md), and `numerics`: arguments of its
        numerics_test (e.g. {"min_sqnr_db": 20}; {"runtimes": ["python"]} for a backend that runs
        here in the Python runtime only), or None for no numerics_test, which a variant of a
        backend that no runtime here runs must set (docs/backends.md says where each runs).
        Example: {"xnnpack": {"backends": ["xnnpack"]}, "portable": {"backends": []}}.
      exported: the default exported program of every variant.
      methods: instead of exported, the default methods of every variant.
      metadata: metadata of every variant; a variant's own is merged over it.
      numerics: numerics_test arguments of every variant; a variant's own are merged over them.
      release: the default ExecuTorch release of every variant (None: the toolchain's, "1.5").
      **kwargs: common attributes (tags, visibility) for every target.
    """
    if not variants:
        fail(_where(name) + "variants is empty; give at least one, e.g. {\"portable\": {\"backends\": []}}")
    tests = []
    for variant, settings in variants.items():
        unknown = [k for k in settings if k not in _PROGRAM_KEYS + ["numerics"]]
        if unknown:
            fail(_where(name) + "variant {} sets {}; a variant takes {}".format(
                repr(variant),
                repr(unknown[0]),
                _PROGRAM_KEYS + ["numerics"],
            ))
        program = "{}_{}".format(name, variant)
        attrs = {"exported": exported, "methods": methods, "release": release}
        attrs.update({k: v for k, v in settings.items() if k in _PROGRAM_KEYS})
        if "exported" in settings and "methods" not in settings:
            attrs["methods"] = None
        if "methods" in settings and "exported" not in settings:
            attrs["exported"] = None
        attrs["metadata"] = dict(metadata, **settings.get("metadata", {}))
        executorch_program(name = program, **dict(kwargs, **attrs))
        tests += _numerics_tests(name, program, variant, settings, attrs, numerics, kwargs)
    if not tests:  # a test_suite of no tests would run every test of the package
        common = {k: v for k, v in kwargs.items() if k in ("tags", "testonly", "visibility")}
        native.filegroup(name = name, srcs = [":{}_{}".format(name, v) for v in variants], **common)
        return
    native.test_suite(name = name, tests = tests, **kwargs)
