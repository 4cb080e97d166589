"""bundled_program_test: runs a .bpte's test cases in the ExecuTorch runtime, as a device farm does."""

load(":bundled_program.bzl", "BundledProgramInfo")
load(":py_entry.bzl", "exporter_py", "macro_label")

def _is_number(text):
    """True for "0.001", "1e-3", "5": a non-negative decimal, optionally with an exponent."""
    mantissa, _, exponent = text.lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    if exponent.startswith("-") or exponent.startswith("+"):
        exponent = exponent[1:]
    return (whole.isdigit() or (not whole and fraction.isdigit())) and \
           (not fraction or fraction.isdigit()) and \
           ("e" not in text.lower() or exponent.isdigit())

def _tolerance(where, which, value):
    """The tolerance as a float, or None for the program's backend default."""
    if not value:
        return None
    if not _is_number(value):
        fail("{}{} = {} is not a tolerance; write a number >= 0, e.g. 1e-3".format(where, which, repr(value)))
    return float(value)

def _bundled_check_config_impl(ctx):
    where = "bundled_program_test {}: ".format(ctx.attr.test_label)
    bundle = ctx.attr.bundle[BundledProgramInfo]
    config = ctx.actions.declare_file(ctx.label.name + ".json")
    ctx.actions.write(config, json.encode_indent({
        "label": ctx.attr.test_label,
        "bundle": str(bundle.label),
        "bpte": bundle.bpte.short_path,
        "manifest": bundle.manifest.short_path,
        "backends": bundle.program.backends,
        "rtol": _tolerance(where, "rtol", ctx.attr.rtol),
        "atol": _tolerance(where, "atol", ctx.attr.atol),
    }) + "\n")
    return [DefaultInfo(
        files = depset([config]),
        runfiles = ctx.runfiles(files = [config, bundle.bpte, bundle.manifest]),
    )]

_bundled_check_config = rule(
    implementation = _bundled_check_config_impl,
    doc = "Writes the JSON config that exporter/bundled_check.py reads (set up by bundled_program_test).",
    attrs = {
        "bundle": attr.label(mandatory = True, providers = [BundledProgramInfo], doc = "The bundled_program to run."),
        "rtol": attr.string(doc = "Relative tolerance; empty for the backend's default."),
        "atol": attr.string(doc = "Absolute tolerance; empty for the backend's default."),
        "test_label": attr.string(mandatory = True, doc = "The test's label, for messages."),
    },
)

def bundled_program_test(name, bundle, rtol = None, atol = None, **kwargs):
    """Runs every test case of a bundled_program in the ExecuTorch runtime, as a device would.

    The test loads the .bpte with ExecuTorch's bundled-program API (portable_lib's
    _load_bundled_program_from_buffer), and for each method and case lets the runtime load the
    bundled inputs, run the method, and compare its outputs with the bundled expected ones
    (verify_result_with_bundled_expected_output). A failing case is re-run to report the worst
    absolute and relative error.

    Args:
      name: the test's name.
      bundle: a bundled_program target.
      rtol: relative tolerance (a number or a string such as "1e-3"); default as numerics_test's:
        1e-4 for the portable runtime, 1e-3 with XNNPACK.
      atol: absolute tolerance; default 1e-5 portable, 1e-4 with XNNPACK.
      **kwargs: passed to the py_test (tags, size, timeout, ...).
    """
    label = macro_label(name)
    _bundled_check_config(
        name = name + ".config",
        bundle = bundle,
        rtol = str(rtol) if rtol != None else "",
        atol = str(atol) if atol != None else "",
        test_label = label,
        tags = kwargs.get("tags"),
        visibility = ["//visibility:private"],
    )
    config = ":{}.config".format(name)
    exporter_py(
        native.py_test,
        name = name,
        module = "exporter.checks.bundled_cases",
        data = [config],
        args = ["$(rootpath {})".format(config)],
        **kwargs
    )
