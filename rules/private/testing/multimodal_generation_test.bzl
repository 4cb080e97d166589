"""multimodal_generation_test: a multimodal_program generates the eager model's tokens in
ExecuTorch's MultimodalRunner, from each image with each prompt
(exporter/checks/multimodal_generation.py)."""

load("//rules:providers.bzl", "ExecuTorchProgramInfo", "TokenizerInfo")
load("//rules/private/lib:config_entries.bzl", "model_config", "runner_program_config")
load("//rules/private/lib:exporter_py.bzl", "EXPORTER_MODULES")
load(":config_test.bzl", "config_target_attrs", "config_test_attrs", "config_test_rule", "test_prefix", "write_test_config")

_METHODS = ["vision_encoder", "token_embedding", "text_decoder"]

def _multimodal_generation_test_impl(ctx):
    where = test_prefix("multimodal_generation_test", ctx)
    program = ctx.attr.program[ExecuTorchProgramInfo]
    tokenizer = ctx.attr.tokenizer[TokenizerInfo]
    if not ctx.attr.prompts or [p for p in ctx.attr.prompts if not p]:
        fail(where + "prompts must be a non-empty list of non-empty strings, e.g. [\"What is in the picture\"]")
    if not ctx.files.images:
        fail(where + "images is empty; give image files (binary PPM or PGM), e.g. [\"cat.ppm\"]")
    if ctx.attr.max_new_tokens < 1:
        fail(where + "max_new_tokens = {} is too small; use at least 1".format(ctx.attr.max_new_tokens))
    missing = [m for m in _METHODS if m not in program.methods]
    if missing:
        fail(where + "{} has no method {}; give a multimodal_program".format(program.label, missing[0]))
    config, files = runner_program_config(ctx.attr.test_label, program, tokenizer)
    config.update(
        images = [f.short_path for f in ctx.files.images],
        prompts = ctx.attr.prompts,
        max_new_tokens = ctx.attr.max_new_tokens,
    )
    model_files, quantized = [], {}
    for method in _METHODS:
        exported = program.methods[method]
        config[method], sources = model_config(exported.model, runfiles = True)
        model_files.append(sources)
        if exported.options.get("quantize"):
            quantized[method] = {"group_size": exported.options["group_size"], "scheme": exported.options["quantize"]}
        elif exported.quantization:
            fail(where + "{}'s {} is quantized by torch_quantize, which has no eager model to generate with; quantize its export with torch_export's quantize (multimodal_program's quantize) instead".format(program.label, method))
    if quantized:  # only then, so that float programs' configs keep their bytes
        config["quantized"] = quantized
    return write_test_config(ctx, config, files + ctx.files.images, transitive_files = depset(transitive = model_files))

_multimodal_generation_test = config_test_rule(
    implementation = _multimodal_generation_test_impl,
    doc = "The rule behind multimodal_generation_test: it checks the attributes and writes the JSON config that exporter/checks/multimodal_generation.py reads and the launcher that runs it.",
    attrs = config_test_attrs({
        "program": attr.label(mandatory = True, providers = [ExecuTorchProgramInfo], doc = "The multimodal_program."),
        "tokenizer": attr.label(mandatory = True, providers = [TokenizerInfo], doc = "Its tokenizer."),
        "images": attr.label_list(allow_files = [".ppm", ".pgm"], doc = "The image files."),
        "prompts": attr.string_list(doc = "The prompts."),
        "max_new_tokens": attr.int(default = 16, doc = "Tokens to generate per image and prompt."),
    }),
)

def multimodal_generation_test(name, program, tokenizer, images, prompts, max_new_tokens = 16, **kwargs):
    """Generates greedily in ExecuTorch's MultimodalRunner and compares with the eager model.

    Each image with each prompt goes to the runner (its C++ code, through Python bindings) as an
    app gives them: the image file read into pixels, checked against the program's image size
    and channels, scaled to 0..1, then the prompt's text. Every generated token must be the eager
    model's (its vision encoder, token embedding and text decoder, called as the runner calls the
    methods). With several prompts, each image also runs as a chat: the runner's prefill takes the
    image and the prompts but the last, then generate the last. The test prints each pair's continuation, the time to the first token and tokens
    per second (docs/llm.md, "Images and audio"). The native runner does not take part: its
    --generate drives one method over token ids. A method exported with quantize (e.g. a 4-bit
    text decoder) is compared with its eager model quantized the same way, and the test also
    prints how many tokens the float model generates alike.

    Args:
      name: the test's name.
      program: a multimodal_program target.
      tokenizer: the tokenizer target the program was made with.
      images: image files, binary PPM (RGB) or PGM (gray), of the program's image_size.
      prompts: the prompts, e.g. ["What is in the picture"]; one that writes an image token
        (<image>, <|image|>, ...) fails in one line: the runner places images by their order
        among the inputs, not by a token.
      max_new_tokens: tokens to generate per image and prompt (fewer when the context is full or
        the model ends the text).
      **kwargs: passed to the test (tags, size, timeout, ...).
    """
    _multimodal_generation_test(
        program = program,
        tokenizer = tokenizer,
        images = images,
        prompts = prompts,
        max_new_tokens = max_new_tokens,
        **config_target_attrs(name, EXPORTER_MODULES["multimodal_generation"], kwargs)
    )
