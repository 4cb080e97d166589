"""llm_program: a language model as a program that ExecuTorch's LLM runner (TextLLMRunner, the
runner in ExecuTorch's Android and iOS demo apps) loads with its tokenizer.

Its rule lowers like executorch_program's (lowering.bzl's lower_program), with semantics that
add the tokenizer and the runner's limits to the lowering, which writes the runner's constant
methods (exporter/actions/llm.py)."""

load("//exporter:exporter_facts.bzl", "BACKEND_RECORDS", "HF_MODEL_ENTRY")
load("//rules:providers.bzl", "ExecuTorchProgramInfo", "ExportedProgramInfo", "TokenizerInfo")
load("//rules/private/lib:attr_checks.bzl", "macro_label")
load("//rules/private/lib:llm_ops_default.bzl", "program_takes_llm_ops")
load("//rules/private/lib:lowering.bzl", "DEFAULT_KERNELS", "LOWER_DEFAULTS", "PROGRAM_ATTRS", "lower_program", "lowering_semantics", "program_attrs")
load("//rules/private/lib:program_explorer.bzl", "program_explorer_for")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")
load(":backends.bzl", "backend_name", "takes_static_shapes_only")
load(":shape_spec.bzl", "dim", "shape_spec", "tensor")
load(":torch_export.bzl", "EXPORT_DEFAULTS", "torch_export")

# The kernel list of ExecuTorch's LLM operators, which a program with llm_ops calls.
LLM_OPS_KERNELS = str(Label("//native:llm_ops.yaml"))

def _static_shapes(backends):
    """Whether a backend of `backends` (values, unchecked) takes static shapes only."""
    return takes_static_shapes_only([backend_name(b) for b in backends if backend_name(b) in BACKEND_RECORDS])

def _llm_program_impl(ctx):
    tokenizer = ctx.attr.tokenizer[TokenizerInfo]
    llm = {
        "max_context_len": ctx.attr.max_context_len,
        "max_seq_len": ctx.attr.max_seq_len,
        "tokenizer": {"label": str(tokenizer.label), "manifest": tokenizer.manifest.path},
    }
    if _static_shapes(ctx.attr.backends):
        llm["static_shape"] = True  # the macro exported one token per call; the runner prefills token by token
    inputs = [tokenizer.manifest]
    exported = ctx.attr.exported[ExportedProgramInfo] if ctx.attr.exported else None
    if exported and exported.model.entry == HF_MODEL_ENTRY:
        # An hf_model's own bos and eos ids, which its export recorded (exporter/core/special_tokens.py).
        llm["model_manifest"] = exported.manifest.path
        inputs.append(exported.manifest)
    by_default = ctx.attr.llm_ops_defaults if exported and exported.options.get("llm_ops") else []
    return lower_program(ctx, lowering_semantics(
        "llm_program",
        llm = llm,
        inputs = inputs,
        tokenizer = tokenizer,
        kernel_lists = [ctx.attr._llm_ops_kernels] if "kernels" in by_default else [],
        initialized_buffers = [] if "initialized_buffers" in by_default else None,
    ))

llm_program_rule = rule(
    implementation = _llm_program_impl,
    doc = "Lowers a language model for ExecuTorch's LLM runner. Outputs <name>.pte and <name>.pte.json.",
    attrs = dict(PROGRAM_ATTRS, **{
        "tokenizer": attr.label(
            mandatory = True,
            providers = [TokenizerInfo],
            doc = "The tokenizer whose ids and vocabulary the program records.",
        ),
        "max_seq_len": attr.int(mandatory = True, doc = "The runner's get_max_seq_len (checked by the macro)."),
        "max_context_len": attr.int(mandatory = True, doc = "The runner's get_max_context_len (checked by the macro)."),
        "llm_ops_defaults": attr.string_list(
            doc = "The attributes the macro left to llm_ops' default: when the export's default turns " +
                  "llm_ops on, \"kernels\" adds their kernel list and \"initialized_buffers\" is [] (set by the macro).",
        ),
        "_llm_ops_kernels": attr.label(default = LLM_OPS_KERNELS, allow_files = [".yaml"]),
    }),
    provides = [ExecuTorchProgramInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)

def _kernels(embedding_quantize, llm_ops):
    """The app's default kernel libraries: portable, and those of quantized tables and LLM operators."""
    return DEFAULT_KERNELS + (["quantized"] if embedding_quantize else []) + ([LLM_OPS_KERNELS] if llm_ops else [])

def _set_defaults(kwargs, embedding_quantize, llm_ops, backends):
    """The program's kernels and, with llm_ops, its initialized_buffers, unless given.

    custom_sdpa reads a cache only below the call's last position, which the runner wrote first,
    so with llm_ops the cache's zeros are not kept in the .pte (as export_llm's are not). With
    llm_ops = None the export decides (llm_ops_default.bzl), and the rule sets those two then.

    Returns:
      (whether the export decides llm_ops, the attributes left to the rule: its llm_ops_defaults).
    """
    by_default = llm_ops == None and program_takes_llm_ops(backends, kwargs.get("release"), kwargs)
    left = [a for a in ("kernels", "initialized_buffers") if a not in kwargs] if by_default else []
    kwargs.setdefault("kernels", _kernels(embedding_quantize, llm_ops))
    if llm_ops:
        kwargs.setdefault("initialized_buffers", [])
    return by_default, left

def _check_lengths(name, max_seq_len, max_context_len):
    """max_context_len, defaulted and checked with max_seq_len."""
    where = "llm_program {}: ".format(macro_label(name))
    if type(max_seq_len) != "int" or max_seq_len < 2:
        fail(where + "max_seq_len = {} must be an int of at least 2 (the runner calls with up to max_seq_len - 1 tokens)".format(repr(max_seq_len)))
    max_context_len = max_context_len or max_seq_len
    if type(max_context_len) != "int" or max_context_len < max_seq_len:
        fail(where + "max_context_len = {} must be an int of at least max_seq_len ({})".format(repr(max_context_len), max_seq_len))
    return max_context_len

def _runner_spec(name, backends, max_seq_len, common):
    """Declares the shape spec of the runner's forward.

    It takes 1 to max_seq_len - 1 tokens per call, or one token per call for a backend of static
    shapes (the runner then feeds a prompt one by one).
    """
    listed = [b for method in backends.values() for b in method] if type(backends) == "dict" else backends
    seq = 1 if _static_shapes(listed) else "seq"
    shape_spec(
        name = name,
        dims = {} if seq == 1 else {"seq": dim(min = 1, max = max_seq_len - 1)},
        inputs = {
            "tokens": tensor([1, seq], dtype = "int64"),
            "input_pos": tensor([seq], dtype = "int64", fill = 0),
        },
        **common
    )

def llm_program(name, model, tokenizer, max_seq_len, max_context_len = None, backends = LOWER_DEFAULTS["backends"], strict = EXPORT_DEFAULTS["strict"], quantize = None, group_size = EXPORT_DEFAULTS["group_size"], embedding_quantize = None, llm_ops = None, **kwargs):
    """Exports a decoder-only language model for ExecuTorch's LLM runner, as <name>.pte.

    The model's forward takes (tokens [1, seq] int64, input_pos [seq] int64: the positions of those
    tokens) and returns logits [1, seq, vocab], keeping its KV cache in buffers: one method serves
    the prompt (seq tokens) and each new token (seq = 1), over one cache. The macro declares the
    shape spec (<name>_spec: seq from 1 to max_seq_len - 1, or 1 for a backend of static shapes,
    docs/llm.md), the export (<name>_ep) and the program, whose lowering writes the constant methods
    the runner reads: get_max_seq_len, get_max_context_len, get_vocab_size (the logits' size),
    get_bos_id and get_eos_ids (an hf_model's own, from its generation config, else the tokenizer's;
    the tokenizer's bos_id and eos_ids override both), use_kv_cache and enable_dynamic_shape. The
    build fails when the tokenizer's vocabulary is larger than the model's, when an hf_model's end
    ids do not hold the tokenizer's end token, or when the model cannot take a token at position
    max_context_len - 1 (docs/llm.md). `bazel run :<name>.explore` serves the program in Google's
    Model Explorer on 127.0.0.1, as executorch_program's does.

    Args:
      name: the program's name.
      model: the torch_model whose forward is (tokens, input_pos) -> logits.
      tokenizer: the tokenizer target the app loads with the program.
      max_seq_len: the most tokens the runner feeds in one call, plus one (the runner's
        get_max_seq_len); at least 2.
      max_context_len: the most positions the cache holds (get_max_context_len); default max_seq_len.
      backends: as executorch_program's; default ["xnnpack"].
      strict: as torch_export's.
      quantize: as torch_export's: "8da4w" for int4 weights in groups (with int8 dynamic
        activations), "8da8w", or None for float weights.
      group_size: as torch_export's; default 32.
      embedding_quantize: as torch_export's: "4,32" for int4 token (and position) tables in groups
        of 32, "8,0" for int8 with one scale per row, or None for float tables (default: measured
        no faster, docs/llm.md). With it, kernels defaults to ["portable", "quantized"].
      llm_ops: as torch_export's, [] for none, or None (default): ["sdpa", "kv_cache"] where faster,
        an hf_model LM on XNNPACK in the default release, else [] (docs/llm.md, "ExecuTorch's LLM operators").
      **kwargs: executorch_program's other attributes (weights, kernels, metadata, tags, ...).
    """
    max_context_len = _check_lengths(name, max_seq_len, max_context_len)
    by_default, llm_ops_defaults = _set_defaults(kwargs, embedding_quantize, llm_ops, backends)
    common = {"tags": kwargs.get("tags"), "visibility": kwargs.get("visibility")}
    _runner_spec(name + "_spec", backends, max_seq_len, common)
    torch_export(
        name = name + "_ep",
        model = model,
        shapes = ":" + name + "_spec",
        strict = strict,
        quantize = quantize,
        group_size = group_size,
        embedding_quantize = embedding_quantize,
        llm_ops = llm_ops,
        llm_ops_by_default = by_default,
        **common
    )
    llm_program_rule(
        name = name,
        tokenizer = tokenizer,
        max_seq_len = max_seq_len,
        max_context_len = max_context_len,
        llm_ops_defaults = llm_ops_defaults,
        **program_attrs(exported = ":" + name + "_ep", backends = backends, **kwargs)
    )
    program_explorer_for(name, kwargs)
