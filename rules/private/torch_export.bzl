"""torch_export: runs torch.export on a torch_model with a shape_spec, giving a .pt2."""

load("//exporter:exporter_facts.bzl", "CONFIG_DEFAULTS", "IRS", "LLM_OPS", QUANTIZE_SCHEMES = "EAGER_QUANTIZE_SCHEMES")
load("//rules:providers.bzl", "ExportedProgramInfo", "ShapeSpecInfo", "TorchModelInfo", "exported_program_info")
load("//rules/private/lib:attr_checks.bzl", "check_one_of", "message_prefix")
load("//rules/private/lib:config_entries.bzl", "model_config")
load("//rules/private/lib:exporter_action.bzl", "DEADLINE_ATTRS", "run_exporter")
load("//rules/private/lib:linear_expr.bzl", "is_identifier")
load("//rules/private/lib:llm_ops_default.bzl", "default_llm_ops", "is_hf_language_model")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")

# The export's defaults (exporter/actions/registry.py's ExportOptions).
EXPORT_DEFAULTS = CONFIG_DEFAULTS["export"]

def _check_op_names(where, attr_name, names):
    for name in names:
        parts = name.split(".")
        if len(parts) not in (2, 3) or not all([is_identifier(p) for p in parts]):
            fail("{}{} has {}; name an operator as namespace.op or namespace.op.overload, e.g. \"aten.gelu.default\"".format(
                where,
                attr_name,
                repr(name),
            ))

def _check_ir(ctx, where):
    """ir, decompose and keep must agree; the exporter resolves the operator names."""
    _check_op_names(where, "decompose", ctx.attr.decompose)
    _check_op_names(where, "keep", ctx.attr.keep)
    both = [op for op in ctx.attr.keep if op in ctx.attr.decompose]
    if both:
        fail(where + "{} is in both keep and decompose; remove it from one of them".format(repr(both[0])))
    if ctx.attr.keep and ctx.attr.ir != "core_aten":
        fail(where + "keep only applies to ir = \"core_aten\" (the other IRs decompose nothing by default); set ir = \"core_aten\" or drop keep")
    if ctx.attr.decompose and ctx.attr.ir == "training":
        fail(where + "decompose needs ir = \"inference\" or \"core_aten\"; the training IR runs no decompositions")

def declare_pt2(ctx):
    """The outputs of a rule that makes an exported program: {"pt2": <name>.pt2, "manifest": <name>.pt2.json}."""
    return {
        "pt2": ctx.actions.declare_file(ctx.label.name + ".pt2"),
        "manifest": ctx.actions.declare_file(ctx.label.name + ".pt2.json"),
    }

def exported_program_providers(ctx, outputs, log, **fields):
    """The providers of a rule that makes an exported program (torch_export, torch_quantize).

    Args:
      ctx: the rule context.
      outputs: the dict declare_pt2 gave.
      log: the action's log File.
      **fields: ExportedProgramInfo's fields besides label, pt2 and manifest.

    Returns:
      [ExportedProgramInfo, DefaultInfo, OutputGroupInfo(logs)].
    """
    files = [outputs["pt2"], outputs["manifest"]]
    return [
        exported_program_info(label = ctx.label, pt2 = outputs["pt2"], manifest = outputs["manifest"], **fields),
        DefaultInfo(files = depset(files), runfiles = ctx.runfiles(files = files)),
        OutputGroupInfo(logs = depset([log])),
    ]

def _shapes(ctx):
    """The shape_spec: shapes, else the model's own (an hf_model derives one from its config)."""
    if ctx.attr.shapes:
        return ctx.attr.shapes[ShapeSpecInfo]
    if ShapeSpecInfo in ctx.attr.model:
        return ctx.attr.model[ShapeSpecInfo]
    fail(message_prefix("torch_export", ctx.label) + "shapes is not set and {} has no shape spec of its own; set shapes to the shape_spec to trace with".format(ctx.attr.model.label))

def _check_embedding_quantize(label, spec):
    """Fails unless spec is "<bits>,<group>" as ExecuTorch's export_llm takes it.

    Bits 2, 4 or 8; group a whole number (0: one scale per row).
    """
    parts = spec.split(",")
    if len(parts) != 2 or parts[0] not in ["2", "4", "8"] or not parts[1].isdigit():
        fail(message_prefix("torch_export", label) + "embedding_quantize = {} must be \"<bits>,<group>\" with bits 2, 4 or 8 and a group size (0 for one scale per row), e.g. \"4,32\"".format(repr(spec)))

def check_llm_ops(where, llm_ops):
    """Fails unless llm_ops names ExecuTorch's LLM operators once each, with "sdpa" for "kv_cache".

    Args:
      where: the message prefix naming the target.
      llm_ops: the list to check.
    """
    for op in llm_ops:
        if op not in LLM_OPS:
            fail(where + "llm_ops has {}; use {} or a part of it".format(repr(op), LLM_OPS))
        if len([o for o in llm_ops if o == op]) > 1:
            fail(where + "llm_ops names {} twice; name it once".format(repr(op)))
    if "kv_cache" in llm_ops and "sdpa" not in llm_ops:
        fail(where + "llm_ops = {} has \"kv_cache\" without \"sdpa\": the cache in ExecuTorch's layout is read by its custom_sdpa only; add \"sdpa\"".format(llm_ops))

def _llm_ops(ctx, model):
    """torch_export's llm_ops, checked: ExecuTorch's LLM operators apply to an hf_model's language model.

    With llm_ops_by_default (llm_program's llm_ops = None), the model's default (llm_ops_default.bzl).
    """
    where = message_prefix("torch_export", ctx.label)
    if ctx.attr.llm_ops_by_default:
        if ctx.attr.llm_ops:
            fail(where + "llm_ops = {} and llm_ops_by_default are exclusive; set one of them".format(ctx.attr.llm_ops))
        return default_llm_ops(model)
    check_llm_ops(where, ctx.attr.llm_ops)
    if not is_hf_language_model(model):
        fail(where + "llm_ops = {} needs an hf_model with task = \"text-generation\" (a transformers language model over its static cache), and {} is not one; remove llm_ops".format(ctx.attr.llm_ops, model.label))
    return ctx.attr.llm_ops

def _torch_export_impl(ctx):
    model = ctx.attr.model[TorchModelInfo]
    spec = _shapes(ctx)
    _check_ir(ctx, message_prefix("torch_export", ctx.label))
    model_entry, model_files = model_config(model)
    outputs = declare_pt2(ctx)
    options = {
        "strict": ctx.attr.strict,
        "ir": ctx.attr.ir,
        "decompose": ctx.attr.decompose,
        "keep": ctx.attr.keep,
    }
    quantization = None
    if ctx.attr.quantize:  # only then, so that other programs' configs keep their bytes
        check_one_of(message_prefix("torch_export", ctx.label), "quantize", ctx.attr.quantize, QUANTIZE_SCHEMES, fix = "or remove it for float weights")
        if ctx.attr.group_size < 1:
            fail(message_prefix("torch_export", ctx.label) + "group_size = {} must be at least 1, e.g. 32".format(ctx.attr.group_size))
        options.update(quantize = ctx.attr.quantize, group_size = ctx.attr.group_size)
        quantization = {"quantizer": "torchao (eager, before export)", "scheme": "{} (group {})".format(ctx.attr.quantize, ctx.attr.group_size)}
    if ctx.attr.embedding_quantize:  # likewise only then
        _check_embedding_quantize(ctx.label, ctx.attr.embedding_quantize)
        options["embedding_quantize"] = ctx.attr.embedding_quantize
        tables = "embeddings {}".format(ctx.attr.embedding_quantize)
        quantization = {"quantizer": "torchao (eager, before export)", "scheme": quantization["scheme"] + ", " + tables if quantization else tables}
    llm_ops = _llm_ops(ctx, model) if ctx.attr.llm_ops or ctx.attr.llm_ops_by_default else []
    if llm_ops:  # likewise only then
        options["llm_ops"] = llm_ops
    log = run_exporter(
        ctx,
        command = "export",
        progress_message = "Exporting {} (torch.export of {})".format(ctx.label, model.label),
        config = dict(options, **{
            "model": model_entry,
            "spec_label": str(spec.label),
            "spec": spec.spec,
        }),
        inputs = model_files,
        outputs = outputs,
    )
    return exported_program_providers(ctx, outputs, log, model = model, spec = spec, options = options, quantization = quantization, calibration = None)

torch_export = rule(
    implementation = _torch_export_impl,
    doc = "Exports a torch_model with torch.export. Outputs <name>.pt2 and <name>.pt2.json.",
    attrs = dict(DEADLINE_ATTRS, **{
        "model": attr.label(mandatory = True, providers = [TorchModelInfo], doc = "The torch_model to export."),
        "shapes": attr.label(providers = [ShapeSpecInfo], doc = "The shape_spec to trace with; default the model's own spec (an hf_model's, derived from its config)."),
        "strict": attr.bool(
            default = EXPORT_DEFAULTS["strict"],
            doc = "Export with TorchDynamo (strict = True) or by Python tracing (False, torch's default).",
        ),
        "ir": attr.string(
            default = EXPORT_DEFAULTS["ir"],
            values = IRS,
            doc = "The graph's operator set: \"training\" (torch.export's own graph), \"inference\" " +
                  "(run_decompositions({}): functional, no training ops) or \"core_aten\" (the Core ATen " +
                  "decomposition table).",
        ),
        "decompose": attr.string_list(
            doc = "Operators to decompose on top of the ir's table, e.g. [\"aten.gelu.default\"] " +
                  "(ir = \"inference\" or \"core_aten\").",
        ),
        "keep": attr.string_list(
            doc = "Operators that ir = \"core_aten\" keeps intact instead of decomposing, e.g. " +
                  "[\"aten.linear.default\"].",
        ),
        "quantize": attr.string(
            doc = "Quantize the eager model's linear layers with torchao before export: \"8da4w\" " +
                  "(int8 dynamic activations, int4 weights per group: ExecuTorch's LLM scheme) or " +
                  "\"8da8w\"; a layer whose input width group_size does not divide stays float, " +
                  "and the manifest says so (docs/quantization.md).",
        ),
        "group_size": attr.int(default = EXPORT_DEFAULTS["group_size"], doc = "The weights per quantization group, with quantize."),
        "embedding_quantize": attr.string(
            doc = "Quantize the eager model's nn.Embedding tables before export with ExecuTorch's " +
                  "own transform (its LLM recipe's embedding_quantize): \"<bits>,<group>\", e.g. " +
                  "\"4,32\" (bits 2, 4 or 8; group 0 for one scale per row). They run as " +
                  "quantized_decomposed::embedding_<bits>bit, in the runtime's quantized kernels " +
                  "(docs/quantization.md).",
        ),
        "llm_ops": attr.string_list(
            doc = "ExecuTorch's LLM operators in an hf_model language model's attention, as its " +
                  "export_llm uses them: \"sdpa\" (llama::custom_sdpa reads the KV cache in place) and " +
                  "\"kv_cache\" (the cache in ExecuTorch's layout, written by llama::update_cache; needs " +
                  "\"sdpa\"). With them the model returns the last position's logits only, as export_llm's " +
                  "Llama does. Their kernels are in the wheel's libcustom_ops_aot_lib.so (docs/llm.md).",
        ),
        "llm_ops_by_default": attr.bool(
            doc = "Instead of llm_ops: [\"sdpa\", \"kv_cache\"] where they are measured faster (an " +
                  "hf_model text-generation model of a listed model_type, without a LoRA adapter), else " +
                  "none (set by llm_program when its llm_ops is None; docs/llm.md, \"ExecuTorch's LLM operators\").",
        ),
    }),
    provides = [ExportedProgramInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)
