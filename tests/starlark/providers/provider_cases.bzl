"""provider_case: a rule that builds one provider through its checking constructor, for tests.

Each case gives the constructor something wrong (a field of the wrong type, a missing or unknown
field, a dict without its keys); bad_target_test checks that the rule fails with a message naming
the provider and the field. The "good" case builds every provider right.
"""

load(
    "//rules:providers.bzl",
    "arm64_binary_info",
    "exported_program_info",
    "golden_update_info",
    "model_bundle_info",
    "program_dashboard_info",
    "shape_spec_info",
    "tokenizer_info",
    "torch_model_info",
)

def _model(ctx, **overrides):
    fields = dict(
        label = ctx.label,
        entry = "pkg.mod:fn",
        init_args = {},
        checkpoint = None,
        checkpoint_files = [],
        srcs = depset(),
        import_roots = depset(),
        lora = None,
    )
    fields.update(overrides)
    return torch_model_info(**fields)

def _exported(ctx, **overrides):
    f = ctx.file.some_file
    fields = dict(
        label = ctx.label,
        pt2 = f,
        manifest = f,
        model = _model(ctx),
        spec = shape_spec_info(label = ctx.label, spec = {"dims": {}, "inputs": [], "hint": None}),
        options = {"decompose": [], "ir": "training", "keep": [], "strict": False},
        quantization = None,
        calibration = None,
    )
    fields.update(overrides)
    return exported_program_info(**fields)

def _provider_case_impl(ctx):
    case = ctx.attr.case
    if case == "good":
        exported = _exported(ctx)
        model_bundle_info(label = ctx.label, directory = ctx.file.some_file, programs = {"x": exported})
        golden_update_info(configs = depset(), runfiles = ctx.runfiles())
        tokenizer_info(label = ctx.label, file = ctx.file.some_file, format = "huggingface", manifest = ctx.file.some_file)
        program_dashboard_info(reports = depset(), summaries = depset(), budgets = depset(), numerics = depset(), instructions = depset())
        arm64_binary_info(binary = ctx.file.some_file, runfiles = ctx.runfiles())
    elif case == "pt2_not_a_file":
        _exported(ctx, pt2 = "model.pt2")
    elif case == "model_not_a_model":
        _exported(ctx, model = struct(label = ctx.label))
    elif case == "options_without_ir":
        _exported(ctx, options = {"decompose": [], "keep": [], "strict": False})
    elif case == "missing_field":
        torch_model_info(label = ctx.label, entry = "pkg.mod:fn", init_args = {}, checkpoint = None, checkpoint_files = [], srcs = depset(), lora = None)
    elif case == "unknown_field":
        _model(ctx, weights = "w.pt")
    elif case == "spec_without_dims":
        shape_spec_info(label = ctx.label, spec = {"inputs": []})
    elif case == "tokenizer_without_manifest":
        tokenizer_info(label = ctx.label, file = ctx.file.some_file, format = "huggingface", manifest = None)
    elif case == "bundle_of_files":
        model_bundle_info(label = ctx.label, directory = ctx.file.some_file, programs = {"x": ctx.file.some_file})
    else:
        fail("provider_case: unknown case " + case)
    return []

provider_case = rule(
    implementation = _provider_case_impl,
    doc = "Builds providers through the checking constructors of //rules:providers.bzl.",
    attrs = {
        "case": attr.string(mandatory = True, doc = "Which (bad) provider to build; \"good\" for right ones."),
        "some_file": attr.label(default = "provider_cases.bzl", allow_single_file = True, doc = "A File for the File fields."),
    },
)
