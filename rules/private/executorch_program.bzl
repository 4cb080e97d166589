"""executorch_program: lowers a torch_export's .pt2 to an ExecuTorch .pte. Never re-exports."""

load("//rules:providers.bzl", "ExecuTorchProgramInfo", "ExportedProgramInfo")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")
load(":exporter_action.bzl", "run_exporter")

BACKENDS = ["xnnpack"]

def _executorch_program_impl(ctx):
    for backend in ctx.attr.backends:
        if backend not in BACKENDS:
            fail("backends has {}; use {} (or [] for the portable runtime)".format(repr(backend), BACKENDS))
    exported = ctx.attr.exported[ExportedProgramInfo]
    pte = ctx.actions.declare_file(ctx.label.name + ".pte")
    manifest = ctx.actions.declare_file(ctx.label.name + ".pte.json")
    outputs = {"pte": pte, "manifest": manifest}
    if ctx.attr.summary:
        # What pte_inspect --json prints, so tests and CI can diff it.
        outputs["summary"] = ctx.actions.declare_file(ctx.label.name + ".summary.json")
    log = run_exporter(
        ctx,
        command = "lower",
        mnemonic = "ExecuTorchLower",
        progress_message = "Lowering {} to ExecuTorch ({})".format(
            ctx.label,
            ", ".join(ctx.attr.backends) or "portable",
        ),
        config = {
            "exported_label": str(exported.label),
            "pt2": exported.pt2.path,
            "backends": ctx.attr.backends,
            # For messages: the spec names the sizes, the options are the fixes to offer.
            "spec_label": str(exported.spec.label),
            "spec": exported.spec.spec,
            "export": exported.options,
        },
        inputs = [exported.pt2],
        outputs = outputs,
    )
    files = outputs.values()
    return [
        ExecuTorchProgramInfo(
            label = ctx.label,
            pte = pte,
            manifest = manifest,
            backends = ctx.attr.backends,
            exported = exported,
        ),
        DefaultInfo(files = depset(files), runfiles = ctx.runfiles(files = files)),
        OutputGroupInfo(
            logs = depset([log]),
            pte_summary = depset([outputs["summary"]] if ctx.attr.summary else []),
        ),
    ]

executorch_program = rule(
    implementation = _executorch_program_impl,
    doc = "Lowers an exported program to ExecuTorch. Outputs <name>.pte and <name>.pte.json.",
    attrs = {
        "exported": attr.label(
            mandatory = True,
            providers = [ExportedProgramInfo],
            doc = "The torch_export target whose .pt2 to lower.",
        ),
        "backends": attr.string_list(
            default = ["xnnpack"],
            doc = "Delegates to partition for: ['xnnpack'], or [] for the portable runtime only.",
        ),
        "summary": attr.bool(
            default = False,
            doc = "Also write <name>.summary.json: the .pte's methods, operators, delegates and " +
                  "sizes, as `pte_inspect --json` prints them (output group pte_summary).",
        ),
    },
    provides = [ExecuTorchProgramInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)
