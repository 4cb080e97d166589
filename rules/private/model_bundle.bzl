"""model_bundle: collects programs into one folder of digest-named files plus index.json."""

load("//rules:providers.bzl", "ExecuTorchProgramInfo", "ExportedProgramInfo", "ModelBundleInfo", "model_bundle_info")
load("//rules/private/lib:attr_checks.bzl", "message_prefix")
load("//rules/private/lib:exporter_action.bzl", "DEADLINE_ATTRS", "run_exporter")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")

def _program_entry(target):
    """(kind, info, file) of one `programs` entry."""
    if ExecuTorchProgramInfo in target:
        info = target[ExecuTorchProgramInfo]
        return "pte", info, info.pte
    info = target[ExportedProgramInfo]
    return "pt2", info, info.pt2

def _model_bundle_impl(ctx):
    programs, entries, inputs = {}, {}, []
    for target in ctx.attr.programs:
        kind, info, program = _program_entry(target)
        label = str(info.label)
        if label in programs:
            fail(message_prefix("model_bundle", ctx.label) + "programs lists {} twice; list each program once".format(label))
        programs[label] = info
        entries[label] = {
            "file": program.path,
            "kind": kind,
            "label": label,
            "manifest": info.manifest.path,
        }
        inputs += [program, info.manifest]
        ptd = getattr(info, "ptd", None)
        if ptd:  # external weights: the app needs them too; equal ones are stored once
            entries[label]["ptd"] = ptd.path
            inputs.append(ptd)
        tokenizer = getattr(info, "tokenizer", None)
        if tokenizer:  # an llm_program's tokenizer ships beside it, named like the weights
            entries[label]["tokenizer"] = {"file": tokenizer.file.path, "manifest": tokenizer.manifest.path}
            inputs += [tokenizer.file, tokenizer.manifest]

    directory = ctx.actions.declare_directory(ctx.label.name)
    log = run_exporter(
        ctx,
        command = "bundle",
        progress_message = "Bundling {} ({} programs)".format(ctx.label, len(entries)),
        config = {"programs": [entries[label] for label in sorted(entries)]},
        inputs = inputs,
        outputs = {"bundle": directory},
    )
    return [
        model_bundle_info(label = ctx.label, directory = directory, programs = programs),
        DefaultInfo(files = depset([directory]), runfiles = ctx.runfiles(files = [directory])),
        OutputGroupInfo(logs = depset([log])),
    ]

model_bundle = rule(
    implementation = _model_bundle_impl,
    doc = "The programs an app ships, in one folder: each file is named by its sha256 " +
          "(<digest>.pte or <digest>.pt2, and a program's <digest>.ptd weights and an " +
          "llm_program's tokenizer), and index.json maps every program's label to its " +
          "file, digest, size and manifest metadata. Equal files are stored once.",
    attrs = dict(DEADLINE_ATTRS, **{
        "programs": attr.label_list(
            mandatory = True,
            allow_empty = False,
            providers = [[ExecuTorchProgramInfo], [ExportedProgramInfo]],
            doc = "executorch_program targets (stored as .pte) or torch_export targets (.pt2).",
        ),
    }),
    provides = [ModelBundleInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)
