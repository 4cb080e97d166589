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
    tokenizer_config = ctx.file.tokenizer_config
    if tokenizer_config and kind != "huggingface":
        fail(where + "tokenizer_config names the special tokens of a Hugging Face tokenizer.json, but src is a {} file; drop tokenizer_config, or set bos_id and eos_ids".format(kind))
    config = {
        "src": src.path,
        "format": kind,
        "bos_id": None if ctx.attr.bos_id == -1 else ctx.attr.bos_id,
        "eos_ids": ctx.attr.eos_ids,
    }
    if tokenizer_config:  # only then: other tokenizers' configs keep their bytes
        config["tokenizer_config"] = tokenizer_config.path
    manifest = ctx.actions.declare_file(ctx.label.name + ".tokenizer.json")
    run_exporter(
        ctx,
        command = "tokenizer",
        progress_message = "Checking tokenizer {} ({})".format(ctx.label, kind),
        config = config,
        inputs = [src] + ([tokenizer_config] if tokenizer_config else []),
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
<name>.tokenizer.json: its format, sha256, vocabulary size, and its bos and eos ids with where
each came from: `bos_id` and `eos_ids` when set, else the tokens that `tokenizer_config` names
(its bos_token and eos_token, looked up in the tokenizer.json), else those the library picks from
the file alone (special tokens named like bos and eos, or begin and end). An llm_program takes
its get_bos_id and get_eos_ids from the model when the model is an hf_model with ids of its own
(its generation config, as transformers' generate() does), else from here; set `bos_id` or
`eos_ids` to override both. It fails when the vocabulary does not fit the model, or when the
model's end ids do not hold the tokenizer's end token (docs/llm.md, docs/huggingface.md).

    tokenizer(name = "qwen_tokenizer", src = "qwen/tokenizer.json", tokenizer_config = "qwen/tokenizer_config.json")

hf_model makes <name>_tokenizer this way from a checkpoint folder's files.""",
    attrs = dict(DEADLINE_ATTRS, **{
        "src": attr.label(
            mandatory = True,
            allow_single_file = True,
            doc = "The tokenizer file: a Hugging Face tokenizer.json, a SentencePiece tokenizer.model, " +
                  "a tiktoken file or a llama2.c tokenizer.bin.",
        ),
        "format": attr.string(doc = "One of huggingface, sentencepiece, tiktoken, llama2c; default from the file's name (.json, .model, .tiktoken)."),
        "bos_id": attr.int(default = -1, doc = "The begin-of-text id; default (-1) the model's (an hf_model's generation config), else the tokenizer's own."),
        "eos_ids": attr.int_list(doc = "The ids that end generation; default the model's (an hf_model's generation config), else the tokenizer's own end id."),
        "tokenizer_config": attr.label(
            allow_single_file = [".json"],
            doc = "The tokenizer_config.json saved with a Hugging Face tokenizer.json: its bos_token and " +
                  "eos_token are the tokenizer's own ids, as transformers reads them; default none (the " +
                  "runner's library then picks them from the file alone).",
        ),
    }),
    provides = [TokenizerInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)
