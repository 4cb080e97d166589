"""torch_model: a model's Python sources, its entry point and optional weights."""

load("//rules:providers.bzl", "TorchModelInfo", "torch_model_info")
load("//rules/private/lib:attr_checks.bzl", "message_prefix")
load("//rules/private/lib:entry_points.bzl", "check_entry", "import_roots")

def _torch_model_impl(ctx):
    check_entry(message_prefix("torch_model", ctx.label), ctx.attr.entry, "models.resnet:resnet18")
    dep_srcs = [d[TorchModelInfo].srcs for d in ctx.attr.deps if TorchModelInfo in d]
    dep_srcs += [d[PyInfo].transitive_sources for d in ctx.attr.deps if TorchModelInfo not in d]
    srcs = depset(ctx.files.srcs, transitive = dep_srcs)

    # py_library deps (a custom op's registration, say) import from their repository's root.
    library_files = [
        f
        for d in ctx.attr.deps
        if TorchModelInfo not in d
        for f in d[PyInfo].transitive_sources.to_list()
    ]
    roots = depset(
        import_roots(ctx.files.srcs + library_files),
        transitive = [d[TorchModelInfo].import_roots for d in ctx.attr.deps if TorchModelInfo in d],
    )
    checkpoint = ctx.file.checkpoint
    folders = sorted({f.dirname: None for f in ctx.files.checkpoint_dir}.keys())
    if len(folders) > 1:
        fail(message_prefix("torch_model", ctx.label) + "checkpoint_dir has files in {} folders ({}); list the files of one folder, e.g. glob([\"llama/*\"])".format(len(folders), ", ".join(folders)))
    runfiles = ctx.runfiles(
        files = ctx.files.srcs + ([checkpoint] if checkpoint else []) + ctx.files.checkpoint_dir,
        transitive_files = srcs,
    )
    for dep in ctx.attr.deps:
        runfiles = runfiles.merge(dep[DefaultInfo].default_runfiles)
    return [
        torch_model_info(
            label = ctx.label,
            entry = ctx.attr.entry,
            init_args = json.decode(ctx.attr.init_args_json),
            checkpoint = checkpoint,
            checkpoint_files = ctx.files.checkpoint_dir,
            srcs = srcs,
            import_roots = roots,
            lora = None,
        ),
        # A torch_model is also a py_library, so tests and apps can import the model code.
        PyInfo(transitive_sources = srcs),
        DefaultInfo(files = depset(ctx.files.srcs), runfiles = runfiles),
    ]

torch_model_rule = rule(
    implementation = _torch_model_impl,
    doc = "A PyTorch model: sources plus an entry point that returns an nn.Module.",
    attrs = {
        "srcs": attr.label_list(allow_files = [".py"], doc = "The model's Python files."),
        "deps": attr.label_list(
            providers = [[TorchModelInfo], [PyInfo]],
            doc = "torch_model or py_library targets whose code the model imports.",
        ),
        "entry": attr.string(
            mandatory = True,
            doc = "'package.module:callable'; the callable (a function or an nn.Module class) " +
                  "returns the model. The package path is the file's workspace-relative path, or an " +
                  "installed module's name (e.g. 'torch._export.db.examples.cond_operands:model', a " +
                  "module instance used as is, or 'executorch.examples.models.lstm:LSTMModel', whose " +
                  "get_eager_model() gives the model).",
        ),
        "init_args_json": attr.string(default = "{}", doc = "Keyword arguments as JSON (set by the macro)."),
        "checkpoint": attr.label(
            allow_single_file = [".pt", ".pth", ".bin", ".ckpt"],
            doc = "Optional state_dict, loaded with torch.load(weights_only=True).",
        ),
        "checkpoint_dir": attr.label_list(
            allow_files = True,
            doc = "Optional checkpoint folder, as its files (e.g. glob([\"llama/*\"]): config.json, " +
                  "*.safetensors, tokenizer files), all in one folder. The entry is called with " +
                  "checkpoint_dir = that folder's path, e.g. for transformers' from_pretrained; " +
                  "every file is an input of the export (docs/llm.md).",
        ),
    },
    provides = [TorchModelInfo],
)

def torch_model(name, init_args = {}, **kwargs):
    """Declares a model. init_args holds the callable's keyword arguments (JSON values)."""
    torch_model_rule(name = name, init_args_json = json.encode(init_args), **kwargs)
