"""parsed_expressions: writes how linear_expr.bzl parses each size expression of expressions.bzl,
as JSON, so that a Python test can compare it with the exporter's sympy parser. The one fact of
the rules that cannot be generated from the exporter's Python: the other values the two sides
share come from //exporter:exporter_facts.bzl."""

# These tests read the rules' private files on purpose (bzl-visibility is off for those loads).
load("//rules/private/lib:linear_expr.bzl", "parse_linear")  # buildifier: disable=bzl-visibility
load(":expressions.bzl", "ANALYSIS_ONLY", "BAD", "GOOD")

def _parsed(text):
    e = parse_linear(text)
    if e.error:
        return {"text": text, "error": e.error}
    return {"text": text, "name": e.name, "a": e.a, "b": e.b}

def _parsed_expressions_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".json")
    ctx.actions.write(out, json.encode_indent({
        "expressions": [_parsed(text) for text, _ in GOOD] + [_parsed(text) for text in BAD],
        "analysis_only": ANALYSIS_ONLY,
    }) + "\n")
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

parsed_expressions = rule(
    implementation = _parsed_expressions_impl,
    doc = "Writes <name>.json: every expression of expressions.bzl as linear_expr.bzl parses it.",
)
