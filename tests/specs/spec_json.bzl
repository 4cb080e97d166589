"""spec_json: writes a shape_spec's checked spec (ShapeSpecInfo.spec) to <name>.json for tests."""

load("//rules:providers.bzl", "ShapeSpecInfo")

def _spec_json_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".json")
    ctx.actions.write(out, json.encode_indent(ctx.attr.spec[ShapeSpecInfo].spec) + "\n")
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

spec_json = rule(
    implementation = _spec_json_impl,
    doc = "The analysis-time result of a shape_spec, as JSON, so a test can read it.",
    attrs = {"spec": attr.label(mandatory = True, providers = [ShapeSpecInfo], doc = "The shape_spec.")},
)
