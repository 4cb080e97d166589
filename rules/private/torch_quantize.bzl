"""torch_quantize: PT2E quantization of a torch_export's .pt2, giving a quantized .pt2."""

load("//exporter:exporter_facts.bzl", "CONFIG_DEFAULTS", "QUANTIZERS", "QUANTIZER_SCHEMES", "SCHEMES")
load("//rules:providers.bzl", "CalibrationDataInfo", "ExportedProgramInfo")
load("//rules/private/lib:attr_checks.bzl", "check_one_of", "message_prefix")
load("//rules/private/lib:config_entries.bzl", "exported_config")
load("//rules/private/lib:exporter_action.bzl", "DEADLINE_ATTRS", "run_exporter")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")
load(":backends.bzl", "package_identities", "packages_label")
load(":torch_export.bzl", "declare_pt2", "exported_program_providers")

# The quantization's defaults (exporter/actions/registry.py's QuantizeConfig). SCHEMES maps each
# scheme to whether it needs calibration (static activation scales).
_DEFAULTS = CONFIG_DEFAULTS["quantize"]

def _check(ctx):
    where = message_prefix("torch_quantize", ctx.label)
    check_one_of(where, "quantizer", ctx.attr.quantizer, QUANTIZERS)
    check_one_of(where, "scheme", ctx.attr.scheme, sorted(SCHEMES.keys()))
    own = QUANTIZER_SCHEMES[ctx.attr.quantizer]
    if ctx.attr.scheme not in own:
        fail(where + "quantizer {} takes scheme {}, not {}; set scheme = {} (or quantizer = \"xnnpack\")".format(repr(ctx.attr.quantizer), own, repr(ctx.attr.scheme), repr(own[0])))
    static = SCHEMES[ctx.attr.scheme]
    if static and not ctx.attr.calibration:
        fail(where + "scheme {} fixes activation scales from sample inputs; set calibration = \":<calibration_data>\" (or use scheme = \"int8_dynamic_per_channel\", which needs none)".format(repr(ctx.attr.scheme)))
    if not static and ctx.attr.calibration:
        fail(where + "scheme {} computes activation scales at run time and observes no calibration batches; remove calibration (or use a static scheme)".format(repr(ctx.attr.scheme)))

def _quantizer_packages(quantizer):
    """The package repository of the quantizer's backend, if its packages have a lock of their own.

    A computed default, so that only a torch_quantize that names such a quantizer fetches it.
    """
    label = packages_label(quantizer)
    return Label(label) if label else None

def _packages_config(ctx):
    # Only when there are some, so that the configs of XNNPACK's quantizations keep their bytes.
    if not ctx.files._quantizer_packages:
        return {}
    return {"backend_packages": [f.path for f in package_identities(ctx.files._quantizer_packages)]}

def _torch_quantize_impl(ctx):
    _check(ctx)
    exported = ctx.attr.exported[ExportedProgramInfo]
    calibration = ctx.attr.calibration[CalibrationDataInfo] if ctx.attr.calibration else None
    outputs = declare_pt2(ctx)
    config = dict(exported_config(exported, spec_label = True), **{
        "strict": exported.options["strict"],
        "quantizer": ctx.attr.quantizer,
        "scheme": ctx.attr.scheme,
        "calibration": {
            "label": str(calibration.label),
            "batches": calibration.batches.path,
        } if calibration else None,
    })
    config.update(_packages_config(ctx))
    log = run_exporter(
        ctx,
        command = "quantize",
        progress_message = "Quantizing {} ({}, {})".format(ctx.label, ctx.attr.quantizer, ctx.attr.scheme),
        config = config,
        inputs = [exported.pt2] + ([calibration.batches] if calibration else []) + ctx.files._quantizer_packages,
        outputs = outputs,
    )
    return exported_program_providers(
        ctx,
        outputs,
        log,
        model = exported.model,
        spec = exported.spec,
        # The re-export traces torch.export's own (training) IR.
        options = {"strict": exported.options["strict"], "ir": "training", "decompose": [], "keep": []},
        quantization = {"quantizer": ctx.attr.quantizer, "scheme": ctx.attr.scheme},
        calibration = calibration,
    )

torch_quantize = rule(
    implementation = _torch_quantize_impl,
    doc = "Quantizes an exported program with PT2E (prepare_pt2e, calibration, convert_pt2e) and " +
          "re-exports it with the same shape spec. Outputs <name>.pt2 and <name>.pt2.json; takes " +
          "the place of a torch_export everywhere.",
    attrs = dict({
        "exported": attr.label(
            mandatory = True,
            providers = [ExportedProgramInfo],
            doc = "The torch_export whose .pt2 to quantize (its model's sources are not read).",
        ),
        "quantizer": attr.string(
            default = _DEFAULTS["quantizer"],
            doc = "The PT2E quantizer: \"xnnpack\" (ExecuTorch's XNNPACKQuantizer), or the name " +
                  "of another backend with a quantizer of its own, for programs lowered for that " +
                  "backend; docs/backends.md lists them and the schemes each takes.",
        ),
        "_quantizer_packages": attr.label(
            default = _quantizer_packages,
            allow_files = True,
            doc = "The package repository of the quantizer, if it has one (computed from quantizer).",
        ),
        "scheme": attr.string(
            default = _DEFAULTS["scheme"],
            doc = "\"int8_static_per_channel\" (int8 activations with calibrated scales, per-channel " +
                  "int8 weights), \"int8_static_per_tensor\", or \"int8_dynamic_per_channel\" " +
                  "(activation scales computed at run time: linear-heavy models, no calibration).",
        ),
        "calibration": attr.label(
            providers = [CalibrationDataInfo],
            doc = "The calibration_data a static scheme observes; refused for a dynamic scheme.",
        ),
    }, **DEADLINE_ATTRS),
    provides = [ExportedProgramInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)
