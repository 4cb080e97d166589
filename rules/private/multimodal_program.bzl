"""multimodal_program: a vision-language model as one program with the methods ExecuTorch's
MultimodalRunner calls (vision_encoder, token_embedding, text_decoder), loaded with its tokenizer.

Its rule lowers like llm_program's (lowering.bzl's lower_program), with semantics that add the
tokenizer, the runner's limits and the image's facts; the lowering checks the methods against
each other and writes the constant methods (exporter/actions/multimodal.py)."""

load("//rules:providers.bzl", "ExecuTorchProgramInfo", "TokenizerInfo")
load("//rules/private/lib:attr_checks.bzl", "macro_label", "message_prefix")
load("//rules/private/lib:lowering.bzl", "LOWER_DEFAULTS", "PROGRAM_ATTRS", "lower_program", "lowering_semantics", "program_attrs")
load("//rules/private/lib:program_explorer.bzl", "program_explorer_for")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")
load(":shape_spec.bzl", "dim", "shape_spec", "tensor")
load(":torch_export.bzl", "EXPORT_DEFAULTS", "torch_export")

# The runner's image: 3 (RGB) or 4 (RGBA) channels; it refuses others.
_CHANNELS = [3, 4]

def _check_image(ctx):
    """Fails in one line on an image the runner would refuse (checked at analysis, so tested)."""
    where = message_prefix("multimodal_program", ctx.label)
    if len(ctx.attr.image_size) != 2 or [s for s in ctx.attr.image_size if s < 1]:
        fail(where + "image_size = {} must be [height, width], two ints of at least 1, e.g. [224, 224]".format(ctx.attr.image_size))
    if ctx.attr.channels not in _CHANNELS:
        fail(where + "channels = {} is not one ExecuTorch's MultimodalRunner takes; use 3 (RGB) or 4 (RGBA) and convert the image in the app".format(ctx.attr.channels))

def _multimodal_program_impl(ctx):
    _check_image(ctx)
    tokenizer = ctx.attr.tokenizer[TokenizerInfo]
    multimodal = {
        "channels": ctx.attr.channels,
        "image_size": ctx.attr.image_size,
        "max_context_len": ctx.attr.max_context_len,
        "max_seq_len": ctx.attr.max_seq_len,
        "tokenizer": {"label": str(tokenizer.label), "manifest": tokenizer.manifest.path},
    }
    return lower_program(ctx, lowering_semantics(
        "multimodal_program",
        multimodal = multimodal,
        inputs = [tokenizer.manifest],
        tokenizer = tokenizer,
    ))

multimodal_program_rule = rule(
    implementation = _multimodal_program_impl,
    doc = "Lowers a vision-language model for ExecuTorch's MultimodalRunner. Outputs <name>.pte and <name>.pte.json.",
    attrs = dict(PROGRAM_ATTRS, **{
        "tokenizer": attr.label(mandatory = True, providers = [TokenizerInfo], doc = "The tokenizer the app loads."),
        "max_seq_len": attr.int(mandatory = True, doc = "The runner's get_max_seq_len (checked by the macro)."),
        "max_context_len": attr.int(mandatory = True, doc = "The runner's get_max_context_len (checked by the macro)."),
        "image_size": attr.int_list(mandatory = True, doc = "[height, width] (checked by the macro)."),
        "channels": attr.int(mandatory = True, doc = "The image's channels (checked by the macro)."),
    }),
    provides = [ExecuTorchProgramInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)

def _check(name, max_seq_len, max_context_len, embedding_dim):
    """max_context_len, defaulted; fails in one line on a length or width the macro needs."""
    where = "multimodal_program {}: ".format(macro_label(name))
    if type(max_seq_len) != "int" or max_seq_len < 2:
        fail(where + "max_seq_len = {} must be an int of at least 2 (the runner calls with up to max_seq_len - 1 embeddings)".format(repr(max_seq_len)))
    max_context_len = max_context_len or max_seq_len
    if type(max_context_len) != "int" or max_context_len < max_seq_len:
        fail(where + "max_context_len = {} must be an int of at least max_seq_len ({})".format(repr(max_context_len), max_seq_len))
    if type(embedding_dim) != "int" or embedding_dim < 1:
        fail(where + "embedding_dim = {} must be an int of at least 1: the width of the embeddings text_decoder takes".format(repr(embedding_dim)))
    return max_context_len

def _methods(name, models, exported, decoder_options):
    """{method: model or export}; fails in one line unless each method comes from one of them."""
    where = "multimodal_program {}: ".format(macro_label(name))
    for method, model in models.items():
        if (model == None) == (method not in exported):
            fail(where + "{} is {}; give it either as a torch_model ({} = ...) or as an export (exported = {{\"{}\": ...}})".format(
                method,
                "given twice" if model != None else "missing",
                method,
                method,
            ))
    unknown = [m for m in exported if m not in models]
    if unknown:
        fail(where + "exported names {}, which the runner does not call; use {}".format(unknown[0], ", ".join(models)))
    given = [o for o in ("quantize", "strict") if decoder_options.get(o)]
    if given and "text_decoder" in exported:
        fail(where + "{} applies to text_decoder's export, but exported gives text_decoder; set it on that export instead or give text_decoder as a torch_model".format(given[0]))
    return {m: models[m] or exported[m] for m in models}

def _specs(name, max_seq_len, image_size, channels, embedding_dim, exported, common):
    """Declares <name>_<method>_spec for each method the runner calls that is not in exported."""
    seq = {"seq": dim(min = 1, max = max_seq_len - 1)}
    specs = {
        "vision_encoder": {"inputs": {"image": tensor([1, channels] + image_size)}},
        "token_embedding": {"dims": seq, "inputs": {"tokens": tensor([1, "seq"], dtype = "int64")}},
        "text_decoder": {"dims": seq, "inputs": {
            "embeddings": tensor([1, "seq", embedding_dim]),
            "input_pos": tensor(["seq"], dtype = "int64", fill = 0),
        }},
    }
    for method, spec in specs.items():
        if method not in exported:
            shape_spec(name = "{}_{}_spec".format(name, method), **dict(common, **spec))

def _exports(name, methods, exported, decoder_options, common):
    """Declares <name>_<method>_ep for each method not in exported (decoder_options: text_decoder's)."""
    for method, model in methods.items():
        if method not in exported:
            options = decoder_options if method == "text_decoder" else {}
            torch_export(name = "{}_{}_ep".format(name, method), model = model, shapes = ":{}_{}_spec".format(name, method), **dict(common, **options))

def multimodal_program(name, tokenizer, max_seq_len, embedding_dim, image_size, vision_encoder = None, token_embedding = None, text_decoder = None, exported = {}, channels = 3, max_context_len = None, quantize = None, group_size = EXPORT_DEFAULTS["group_size"], strict = EXPORT_DEFAULTS["strict"], backends = LOWER_DEFAULTS["backends"], **kwargs):
    """Exports a vision-language model for ExecuTorch's MultimodalRunner, as one <name>.pte.

    The runner sends an image through the method vision_encoder (image [1, channels, height,
    width] float32 -> embeddings [1, n, embedding_dim]), text through token_embedding (tokens
    [1, seq] int64 -> [1, seq, embedding_dim]), and either's embeddings through text_decoder
    (embeddings [1, seq, embedding_dim], input_pos [seq] int64 -> logits [1, seq, vocab]), which
    keeps its KV cache in buffers; then each new token through token_embedding and text_decoder.
    The macro declares each method's (but those in exported) shape spec (<name>_<method>_spec; seq from 1 to
    max_seq_len - 1) and export (<name>_<method>_ep), and the program, whose lowering writes
    llm_program's constant methods plus get_image_height, get_image_width, get_image_channels
    and get_image_seq_len. The build fails, in one line, on an image size or channel count the
    runner or the encoder cannot take, and on embeddings whose widths differ between the
    encoders and the decoder (docs/llm.md, "Images and audio"). `bazel run :<name>.explore` serves
    the program in Google's Model Explorer, as executorch_program's does. A method named in
    exported takes that export instead (e.g. a float program's encoders beside a 4-bit decoder),
    and quantize and strict apply to the text decoder alone.

    Args:
      name: the program's name.
      tokenizer: the tokenizer target the app loads with the program.
      max_seq_len: the most embeddings the runner feeds in one call, plus one (an image's
        embeddings go in one call); at least 2.
      embedding_dim: the width of the embeddings text_decoder takes.
      image_size: [height, width] of the image the app gives (after resizing).
      channels: 3 (RGB, the default) or 4 (RGBA).
      vision_encoder: the torch_model whose forward is image -> embeddings.
      token_embedding: the torch_model whose forward is tokens -> embeddings.
      text_decoder: the torch_model whose forward is (embeddings, input_pos) -> logits.
      exported: {method: export} for methods given as exports (another multimodal_program's
        <name>_<method>_ep) instead of models; each method comes from exactly one of the two.
      max_context_len: the most positions the cache holds; default max_seq_len.
      quantize: as torch_export's, for text_decoder's export only ("8da4w": int4 weights in
        groups, int8 dynamic activations); the encoders stay float.
      group_size: as torch_export's; default 32.
      strict: as torch_export's, for text_decoder's export only: a decoder over transformers'
        static cache exports only strictly, and transformers' vision towers only without.
      backends: as executorch_program's; default ["xnnpack"].
      **kwargs: executorch_program's other attributes (weights, kernels, tags, ...).
    """
    max_context_len = _check(name, max_seq_len, max_context_len, embedding_dim)
    common = {"tags": kwargs.get("tags"), "visibility": kwargs.get("visibility")}
    decoder_options = {"strict": strict}
    if quantize:
        decoder_options.update(quantize = quantize, group_size = group_size)
    methods = _methods(name, {"vision_encoder": vision_encoder, "token_embedding": token_embedding, "text_decoder": text_decoder}, exported, decoder_options)
    _specs(name, max_seq_len, image_size, channels, embedding_dim, exported, common)
    _exports(name, methods, exported, decoder_options, common)
    multimodal_program_rule(
        name = name,
        tokenizer = tokenizer,
        max_seq_len = max_seq_len,
        max_context_len = max_context_len,
        image_size = image_size,
        channels = channels,
        **program_attrs(methods = {m: exported.get(m, ":{}_{}_ep".format(name, m)) for m in methods}, backends = backends, **kwargs)
    )
    program_explorer_for(name, kwargs)
