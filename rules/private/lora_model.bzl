"""lora_model: a base torch_model plus a LoRA adapter (rank, alpha, target modules, and its
factors from a checkpoint file or a PEFT folder), usable wherever a torch_model is."""

load("//exporter:exporter_facts.bzl", "PEFT_WEIGHTS")
load("//rules:providers.bzl", "TorchModelInfo", "torch_model_info")
load("//rules/private/lib:attr_checks.bzl", "message_prefix", "parse_number")

def _check(ctx, where, base):
    """The adapter's attributes, checked; returns its alpha as a float."""
    if base.lora:
        fail(where + "base {} is itself a lora_model; give the torch_model it adapts".format(base.label))
    if ctx.attr.rank < 1:
        fail(where + "rank = {} must be at least 1 (the inner size of the factors lora_a and lora_b)".format(ctx.attr.rank))
    alpha = parse_number(where, "alpha", ctx.attr.alpha, what = "a LoRA scale", example = "2 * rank")
    if alpha == None or alpha <= 0:
        fail(where + "alpha = {} must be a number above 0 (the update is scaled by alpha / rank), e.g. 16".format(repr(ctx.attr.alpha)))
    names = ctx.attr.target_modules
    if not names or [n for n in names if not n.strip()] or len(names) != len({n: None for n in names}):
        fail(where + "target_modules = {} must name each linear layer to adapt once, e.g. [\"q_proj\", \"v_proj\"]".format(names))
    if bool(ctx.file.checkpoint) == bool(ctx.files.checkpoint_dir):
        fail(where + "set checkpoint (the factors' file) or checkpoint_dir (a PEFT folder's files), not {}".format(
            "both" if ctx.file.checkpoint else "neither",
        ))
    folders = sorted({f.dirname: None for f in ctx.files.checkpoint_dir}.keys())
    if len(folders) > 1:
        fail(where + "checkpoint_dir has files in {} folders ({}); list the files of one folder, e.g. glob([\"adapter/*\"])".format(len(folders), ", ".join(folders)))
    if ctx.files.checkpoint_dir and PEFT_WEIGHTS not in [f.basename for f in ctx.files.checkpoint_dir]:
        fail(where + "checkpoint_dir has no {} (PEFT's file of the factors); set checkpoint to the factors' file instead".format(PEFT_WEIGHTS))
    return alpha

def _lora_model_impl(ctx):
    where = message_prefix("lora_model", ctx.label)
    base = ctx.attr.base[TorchModelInfo]
    alpha = _check(ctx, where, base)
    files = ([ctx.file.checkpoint] if ctx.file.checkpoint else []) + ctx.files.checkpoint_dir
    return [
        torch_model_info(
            label = ctx.label,
            entry = base.entry,
            init_args = base.init_args,
            checkpoint = base.checkpoint,
            checkpoint_files = base.checkpoint_files,
            srcs = base.srcs,
            import_roots = base.import_roots,
            lora = {
                "alpha": alpha,
                "checkpoint": ctx.file.checkpoint,
                "checkpoint_files": ctx.files.checkpoint_dir,
                "rank": ctx.attr.rank,
                "target_modules": ctx.attr.target_modules,
            },
        ),
        PyInfo(transitive_sources = base.srcs),
        DefaultInfo(
            files = depset(files),
            runfiles = ctx.runfiles(files = files).merge(ctx.attr.base[DefaultInfo].default_runfiles),
        ),
    ]

lora_model_rule = rule(
    implementation = _lora_model_impl,
    doc = "A base torch_model with a LoRA adapter on some of its linear layers.",
    attrs = {
        "base": attr.label(mandatory = True, providers = [TorchModelInfo], doc = "The torch_model the adapter was trained on."),
        "rank": attr.int(mandatory = True, doc = "The factors' rank r: lora_a is [r, in], lora_b [out, r]."),
        "alpha": attr.string(mandatory = True, doc = "The scale's numerator: the update is (alpha / rank) * B A x (set by the macro)."),
        "target_modules": attr.string_list(mandatory = True, doc = "The linear layers to adapt, by name or the end of their path."),
        "checkpoint": attr.label(
            allow_single_file = [".safetensors", ".pt", ".pth", ".bin"],
            doc = "The factors' file: <layer path>.lora_a.weight and .lora_b.weight (PEFT's lora_A, lora_B too).",
        ),
        "checkpoint_dir": attr.label_list(
            allow_files = True,
            doc = "A PEFT adapter folder's files: adapter_model.safetensors, and adapter_config.json " +
                  "(its r, lora_alpha and target_modules must agree with this target's).",
        ),
    },
    provides = [TorchModelInfo],
)

def lora_model(name, base, rank, alpha, target_modules, checkpoint = None, checkpoint_dir = [], **kwargs):
    """A base model with a LoRA adapter: y = W x + b + (alpha / rank) * B (A x) on each target layer.

    The model is the base's (its entry, init_args and checkpoint) with each linear layer that
    target_modules names replaced by one that keeps the layer's weight and bias under their own
    names and adds the factors A [rank, in] and B [out, rank], read from the adapter's
    checkpoint. Use it wherever a torch_model goes: torch_export, llm_program, numerics and
    generation tests (whose eager model is then base plus adapter). With a foundation_weights
    of the base's program, its programs ship only the factors (docs/llm.md, "LoRA adapters").
    The build refuses, in one line naming this target: a target module that names no linear
    layer, factors of the wrong shape (the message gives the rank they have), missing or extra
    factors, and a PEFT adapter_config.json that disagrees with rank, alpha or target_modules.

    Args:
      name: the model's name.
      base: the torch_model the adapter was trained on.
      rank: the factors' rank, an int of at least 1.
      alpha: the LoRA scale's numerator, a number above 0 (the update is scaled by alpha / rank).
      target_modules: the linear layers to adapt: each name matches a module's path or the end
        of it ("qkv" matches "lm.blocks.0.qkv"), as PEFT's target_modules do.
      checkpoint: the factors' file, .safetensors or a torch.save state dict, with the keys
        `<layer path>.lora_a.weight` and `<layer path>.lora_b.weight` (PEFT's
        `base_model.model.<path>.lora_A.weight` and `lora_B` are read too).
      checkpoint_dir: instead, a PEFT adapter folder's files (e.g. glob(["poet/*"])):
        adapter_model.safetensors and adapter_config.json.
      **kwargs: common attributes (tags, visibility, ...).
    """
    lora_model_rule(
        name = name,
        base = base,
        rank = rank,
        alpha = str(alpha),
        target_modules = target_modules,
        checkpoint = checkpoint,
        checkpoint_dir = checkpoint_dir,
        **kwargs
    )
