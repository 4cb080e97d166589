"""bundled_program: a .pte with test inputs and expected outputs, as ExecuTorch's BundledProgram."""

load("//exporter:exporter_facts.bzl", "BUNDLED_REFERENCES", "CONFIG_DEFAULTS")
load("//rules:providers.bzl", "BundledProgramInfo", "ExecuTorchProgramInfo", "bundled_program_info")
load("//rules/private/lib:attr_checks.bzl", "check_method", "check_one_of", "message_prefix")
load("//rules/private/lib:config_entries.bzl", "exported_config", "model_config")
load("//rules/private/lib:dim_sizes.bzl", "full_sizes")
load("//rules/private/lib:exporter_action.bzl", "DEADLINE_ATTRS", "run_exporter")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")

def _cases(where, program, given):
    """{method: [full sizes]}: the listed cases per method, checked, examples filled in."""
    as_list = type(given) == "list"
    if as_list:
        if "forward" in program.methods:
            given = {"forward": given}
        elif len(program.methods) == 1:
            given = {program.methods.keys()[0]: given}
        else:
            fail(where + "{} has methods {} and no forward; give inputs as a dict, e.g. {{\"{}\": [{{...}}]}}".format(
                program.label,
                sorted(program.methods.keys()),
                sorted(program.methods.keys())[0],
            ))
    elif type(given) != "dict":
        fail(where + "inputs must be a list of {dim: size} dicts, or a dict of method name to such lists")
    cases = {}
    for method, listed in given.items():
        check_method(where, "inputs names method", method, program)
        if type(listed) != "list":
            fail(where + "inputs[{}] must be a list of {{dim: size}} dicts".format(repr(method)))
        spec = program.methods[method].spec
        full = []
        for i, sizes in enumerate(listed or [{}]):  # no entry: one case at the examples
            prefix = "inputs" if as_list else "inputs[{}]".format(repr(method))
            sized = full_sizes("{}{}[{}]".format(where, prefix, i), sizes, spec)
            if sized in full:
                fail("{}{}[{}] gives the sizes of {}[{}], {} (a dim it does not name takes its example); give each case other sizes".format(
                    where,
                    prefix,
                    i,
                    prefix,
                    full.index(sized),
                    sized,
                ))
            full.append(sized)
        cases[method] = full
    return cases

def _model_config(where, program, methods):
    """The eager model's config for the action, and its files."""
    models = {str(program.methods[m].model.label): program.methods[m].model for m in methods}
    if len(models) > 1:
        fail(where + "the methods come from different models ({}); bundle them apart, or set reference = \"exported\"".format(sorted(models.keys())))
    return model_config(models.values()[0])

def _bundled_program_impl(ctx):
    where = message_prefix("bundled_program", ctx.label)
    program = ctx.attr.program[ExecuTorchProgramInfo]
    check_one_of(where, "reference", ctx.attr.reference, BUNDLED_REFERENCES)
    cases = _cases(where, program, json.decode(ctx.attr.inputs_json))
    quantized = [m for m in cases if program.methods[m].quantization != None]
    if quantized and ctx.attr.reference == "eager":
        fail(where + "method {} is quantized, so the float eager model is not what it computes; set reference = \"exported\"".format(repr(quantized[0])))
    methods = {}
    inputs = [program.pte, program.manifest]
    for name, sized in cases.items():
        exported = program.methods[name]
        methods[name] = dict(exported_config(exported), cases = sized)
        inputs.append(exported.pt2)
    model, model_files = None, depset()
    if ctx.attr.reference == "eager":
        model, model_files = _model_config(where, program, cases.keys())
    bpte = ctx.actions.declare_file(ctx.label.name + ".bpte")
    manifest = ctx.actions.declare_file(ctx.label.name + ".bpte.json")
    log = run_exporter(
        ctx,
        command = "bundled_program",
        progress_message = "Bundling {} ({} with {} test cases, {} reference)".format(
            ctx.label,
            program.label,
            len([c for listed in cases.values() for c in listed]),
            ctx.attr.reference,
        ),
        config = {
            "program_label": str(program.label),
            "pte": program.pte.path,
            "pte_manifest": program.manifest.path,
            "methods": methods,
            "reference": ctx.attr.reference,
            "model": model,
        },
        inputs = depset(inputs, transitive = [model_files]),
        outputs = {"bpte": bpte, "manifest": manifest},
    )

    # A program with weights = "external" ships its .ptd beside the .bpte: the runtime loads both.
    files = [bpte, manifest] + ([program.ptd] if program.ptd else [])
    return [
        bundled_program_info(
            label = ctx.label,
            bpte = bpte,
            manifest = manifest,
            program = program,
            methods = sorted(cases.keys()),
        ),
        DefaultInfo(files = depset(files), runfiles = ctx.runfiles(files = files)),
        OutputGroupInfo(logs = depset([log])),
    ]

bundled_program_rule = rule(
    implementation = _bundled_program_impl,
    doc = "Writes <name>.bpte (ExecuTorch's BundledProgram) and <name>.bpte.json.",
    attrs = dict(DEADLINE_ATTRS, **{
        "program": attr.label(
            mandatory = True,
            providers = [ExecuTorchProgramInfo],
            doc = "The executorch_program to bundle; with weights = \"external\" its .ptd is " +
                  "an output beside the .bpte (the .bpte.json records its sha256).",
        ),
        "inputs_json": attr.string(default = "[]", doc = "The macro's inputs as JSON (set by the macro)."),
        "reference": attr.string(
            default = CONFIG_DEFAULTS["bundled_program"]["reference"],
            doc = "What computes the expected outputs: \"eager\" (the model's nn.Module) or " +
                  "\"exported\" (each method's .pt2; for quantized programs).",
        ),
    }),
    provides = [BundledProgramInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)

def bundled_program(name, program, inputs = [], **kwargs):
    """Bundles a program with test cases into <name>.bpte, the file a device farm runs.

    A .bpte is ExecuTorch's BundledProgram: the .pte's bytes unchanged, plus for each method a
    list of test cases, each the inputs to feed and the outputs to expect. Inputs are seeded as
    a numerics_test seeds them; the expected outputs come from the eager model (or the exported
    program). On a device, ExecuTorch's bundled-program API loads a case's inputs, runs the
    method, and compares; bundled_program_test does the same on the host. <name>.bpte.json lists
    each case's sizes and shapes.

    Args:
      name: the target's name.
      program: an executorch_program target (weights = "inline").
      inputs: the test cases: a list of {dim name: size} dicts for forward (or the only
        method), e.g. [{"batch": 1}, {"batch": 4}], or a dict of method name to such lists.
        Dims a dict does not name take their tracing example; [] or {} is one case at the
        examples. Each case is a full input: mind the .bpte's size for big inputs.
      **kwargs: reference ("eager" or "exported"), and the common attributes (tags, ...).
    """
    bundled_program_rule(name = name, program = program, inputs_json = json.encode(inputs), **kwargs)
