"""bundled_program_test: runs a .bpte's test cases in the ExecuTorch runtime, as a device farm does."""

load("//rules:providers.bzl", "BundledProgramInfo")
load("//rules/private/lib:attr_checks.bzl", "number_attr", "parse_tolerance")
load("//rules/private/lib:exporter_py.bzl", "EXPORTER_MODULES")
load(":config_test.bzl", "TOLERANCE_ATTRS", "config_target_attrs", "config_test_attrs", "config_test_rule", "test_prefix", "write_test_config")

def _bundled_cases_test_impl(ctx):
    where = test_prefix("bundled_program_test", ctx)
    bundle = ctx.attr.bundle[BundledProgramInfo]
    config = {
        "label": ctx.attr.test_label,
        "bundle": str(bundle.label),
        "bpte": bundle.bpte.short_path,
        "manifest": bundle.manifest.short_path,
        "backends": bundle.program.backends,
        "rtol": parse_tolerance(where, "rtol", ctx.attr.rtol),
        "atol": parse_tolerance(where, "atol", ctx.attr.atol),
    }
    files = [bundle.bpte, bundle.manifest]
    if bundle.program.ptd:
        config["ptd"] = bundle.program.ptd.short_path
        files.append(bundle.program.ptd)
    return write_test_config(ctx, config, files)

_bundled_cases_test = config_test_rule(
    implementation = _bundled_cases_test_impl,
    doc = "The rule behind bundled_program_test: it checks the attributes and writes the JSON config that exporter/checks/bundled_cases.py reads and the launcher that runs it.",
    attrs = config_test_attrs({
        "bundle": attr.label(mandatory = True, providers = [BundledProgramInfo], doc = "The bundled_program to run."),
    }, TOLERANCE_ATTRS),
)

def bundled_program_test(name, bundle, rtol = None, atol = None, **kwargs):
    """Runs every test case of a bundled_program in the ExecuTorch runtime, as a device would.

    The test loads the .bpte with ExecuTorch's bundled-program API (portable_lib's
    _load_bundled_program_from_buffer), and for each method and case lets the runtime load the
    bundled inputs, run the method, and compare its outputs with the bundled expected ones
    (verify_result_with_bundled_expected_output). A failing case is re-run to report the worst
    absolute and relative error. A program with its weights in a .ptd is loaded from the bundle
    with the .ptd, and each case's outputs are judged by the same rule (docs/deployment.md).

    Args:
      name: the test's name.
      bundle: a bundled_program target.
      rtol: relative tolerance (a number or a string such as "1e-3"); default as numerics_test's:
        1e-4 for the portable runtime, 1e-3 with XNNPACK.
      atol: absolute tolerance; default 1e-5 portable, 1e-4 with XNNPACK.
      **kwargs: passed to the test (tags, size, timeout, ...).
    """
    _bundled_cases_test(
        bundle = bundle,
        rtol = number_attr(rtol),
        atol = number_attr(atol),
        **config_target_attrs(name, EXPORTER_MODULES["bundled_cases"], kwargs)
    )
