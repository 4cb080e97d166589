"""starlark_facts: writes what the Starlark side knows as JSON, so a Python test can compare
it with the exporter: the size expressions parsed by linear_expr.bzl, the dtypes, hints, backends,
IRs, quantizers, quantization schemes and kernel libraries the rules accept, and how many values
a shape spec may hold."""

# These tests read the rules' private files on purpose (bzl-visibility is off for those loads).
load("//rules/private:executorch_program.bzl", "BACKENDS", "KERNEL_LIBRARIES")  # buildifier: disable=bzl-visibility
load("//rules/private:exporter_action.bzl", "REPRODUCIBLE_MATH_ENV")  # buildifier: disable=bzl-visibility
load("//rules/private:linear_expr.bzl", "parse_linear")  # buildifier: disable=bzl-visibility
load("//rules/private:shape_spec.bzl", "AUTO", "DYNAMIC", "STATIC")  # buildifier: disable=bzl-visibility
load("//rules/private:shape_spec_check.bzl", "DTYPES", "HINTS", "MAX_VALUES")  # buildifier: disable=bzl-visibility
load("//rules/private:torch_export.bzl", "IRS", "QUANTIZE_SCHEMES")  # buildifier: disable=bzl-visibility
load("//rules/private:torch_quantize.bzl", "QUANTIZERS", "SCHEMES")  # buildifier: disable=bzl-visibility
load("//tests/starlark/shape_spec:expressions.bzl", "ANALYSIS_ONLY", "BAD", "GOOD")

def _parsed(text):
    e = parse_linear(text)
    if e.error:
        return {"text": text, "error": e.error}
    return {"text": text, "name": e.name, "a": e.a, "b": e.b}

def _starlark_facts_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".json")
    ctx.actions.write(out, json.encode_indent({
        "expressions": [_parsed(text) for text, _ in GOOD] + [_parsed(text) for text in BAD],
        "analysis_only": ANALYSIS_ONLY,
        "dtypes": DTYPES,
        "hints": HINTS,
        "hint_constants": [AUTO, DYNAMIC, STATIC],
        "max_values": MAX_VALUES,
        "backends": BACKENDS,
        "irs": IRS,
        "eager_quantize_schemes": QUANTIZE_SCHEMES,
        "quantizers": QUANTIZERS,
        "schemes": SCHEMES,
        "reproducible_math_env": REPRODUCIBLE_MATH_ENV,
        "kernel_libraries": KERNEL_LIBRARIES,
    }) + "\n")
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

starlark_facts = rule(
    implementation = _starlark_facts_impl,
    doc = "Writes <name>.json: parsed expressions, DTYPES, HINTS, MAX_VALUES, BACKENDS, IRS, QUANTIZE_SCHEMES, QUANTIZERS, SCHEMES, KERNEL_LIBRARIES and the actions' math environment.",
)
