"""tokenizer: a tokenizer file as a build target, loaded and checked by the LLM runner's own
tokenizer library (exporter/actions/tokenizer.py)."""

load("//exporter:exporter_facts.bzl", FORMATS = "TOKENIZER_FORMATS")
load("//rules:providers.bzl", "TokenizerInfo", "tokenizer_info")
load("//rules/private/lib:attr_checks.bzl", "check_one_of", "message_prefix")
load("//rules/private/lib:exporter_action.bzl", "DEADLINE_ATTRS", "run_exporter")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")

def _format(where, src, given):
    """The file's format: `given`, else from its name."""
    if given:
        check_one_of(where, "format", given, FORMATS)
        return given
    if src.basename.endswith(".json"):
        return "huggingface"
    if src.basename.endswith(".model"):
        return "sentencepiece"
    if src.basename.endswith(".tiktoken"):
        return "tiktoken"
    fail(where + "cannot tell the format of {} from its name; set format to one of {}".format(src.basename, FORMATS))

def _tokenizer_impl(ctx):
    where = message_prefix("tokenizer", ctx.label)
    src = ctx.file.src
    kind = _format(where, src, ctx.attr.format)
    for name, values in [("bos_id", [ctx.attr.bos_id]), ("eos_ids", ctx.attr.eos_ids)]:
        if [v for v in values if v < -1 or (v == -1 and name == "eos_ids")]:
            fail(where + "{} has a negative id; give the token's id in the file (or leave it unset for the tokenizer's own)".format(name))
    manifest = ctx.actions.declare_file(ctx.label.name + ".tokenizer.json")
    run_exporter(
        ctx,
        command = "tokenizer",
        progress_message = "Checking tokenizer {} ({})".format(ctx.label, kind),
        config = {
            "src": src.path,
            "format": kind,
            "bos_id": None if ctx.attr.bos_id == -1 else ctx.attr.bos_id,
            "eos_ids": ctx.attr.eos_ids,
        },
        inputs = [src],
        outputs = {"manifest": manifest},
    )
    return [
        tokenizer_info(label = ctx.label, file = src, format = kind, manifest = manifest),
        DefaultInfo(files = depset([src, manifest]), runfiles = ctx.runfiles(files = [src, manifest])),
    ]

tokenizer = rule(
    implementation = _tokenizer_impl,
    doc = """A tokenizer for ExecuTorch's LLM runner, checked at build time.

The build loads the file with the runner's own tokenizer library (pytorch_tokenizers) and writes
<name>.tokenizer.json: its format, sha256, vocabulary size and bos and eos ids. An llm_program
reads the ids from it, and fails when the vocabulary does not fit the model (docs/llm.md).""",
    attrs = dict(DEADLINE_ATTRS, **{
        "src": attr.label(
            mandatory = True,
            allow_single_file = True,
            doc = "The tokenizer file: a Hugging Face tokenizer.json, a SentencePiece tokenizer.model, " +
                  "a tiktoken file or a llama2.c tokenizer.bin.",
        ),
        "format": attr.string(doc = "One of huggingface, sentencepiece, tiktoken, llama2c; default from the file's name (.json, .model, .tiktoken)."),
        "bos_id": attr.int(default = -1, doc = "The begin-of-text id; default (-1) the tokenizer's own."),
        "eos_ids": attr.int_list(doc = "The ids that end generation; default the tokenizer's own end id."),
    }),
    provides = [TokenizerInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)
