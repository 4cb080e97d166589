"""seq2seq_generation_test: an encoder-decoder program gives the eager model's tokens in
ExecuTorch's runtime (exporter/checks/seq2seq.py)."""

load("//rules:providers.bzl", "ExecuTorchProgramInfo", "TorchModelInfo")
load("//rules/private/lib:config_entries.bzl", "model_config")
load("//rules/private/lib:exporter_py.bzl", "EXPORTER_MODULES")
load(":config_test.bzl", "config_target_attrs", "config_test_attrs", "config_test_rule", "test_prefix", "write_test_config")

def _seq2seq_test_impl(ctx):
    where = test_prefix("seq2seq_generation_test", ctx)
    program = ctx.attr.program[ExecuTorchProgramInfo]
    missing = [m for m in ("encoder", "decoder") if m not in program.methods]
    if missing:
        fail(where + "{} has no method {}; give a program whose methods are an hf_model's encoder and decoder".format(program.label, " or ".join(missing)))
    if ctx.attr.max_new_tokens < 1 or ctx.attr.cases < 1:
        fail(where + "max_new_tokens and cases must be at least 1")
    if [i for i in ctx.attr.eos_cases if i < 0 or i >= ctx.attr.cases]:
        fail(where + "eos_cases = {} names a case outside 0 to {} (cases - 1); name cases the test runs".format(ctx.attr.eos_cases, ctx.attr.cases - 1))
    model, model_files = model_config(ctx.attr.model[TorchModelInfo], runfiles = True)
    config = {
        "label": ctx.attr.test_label,
        "program": str(program.label),
        "pte": program.pte.short_path,
        "ptd": program.ptd.short_path if program.ptd else None,
        "model": model,
        "encoder_spec": program.methods["encoder"].spec.spec,
        "cases": ctx.attr.cases,
        "max_new_tokens": ctx.attr.max_new_tokens,
        "eos_cases": ctx.attr.eos_cases,
    }
    files = [program.pte] + ([program.ptd] if program.ptd else [])
    return write_test_config(ctx, config, files, transitive_files = model_files)

_seq2seq_test = config_test_rule(
    implementation = _seq2seq_test_impl,
    doc = "The rule behind seq2seq_generation_test: an encoder-decoder program's greedy tokens against the eager model's.",
    attrs = config_test_attrs({
        "program": attr.label(mandatory = True, providers = [ExecuTorchProgramInfo], doc = "The program."),
        "model": attr.label(mandatory = True, providers = [TorchModelInfo], doc = "The whole eager model."),
        "cases": attr.int(default = 2, doc = "Seeded inputs to generate from."),
        "max_new_tokens": attr.int(default = 8, doc = "Tokens to generate per input."),
        "eos_cases": attr.int_list(doc = "The cases whose text must end at an end id before max_new_tokens."),
    }),
)

def seq2seq_generation_test(name, program, model, cases = 2, max_new_tokens = 8, eos_cases = [], **kwargs):
    """Generates greedily with an encoder-decoder program and compares the tokens with eager's.

    The program holds an hf_model's <name>_encoder and <name>_decoder exports as the methods
    encoder and decoder (text2text-generation, or Whisper's speech recognition). For each of
    `cases` seeded inputs (from the encoder's spec; odd ones at its dims' max), the encoder
    method runs once and the decoder method one token at a time from the config's
    decoder_start_token_id until its eos_token_id, as an app would; every token, the stop
    included, must equal those of transformers' generate() of the whole eager model, greedy
    (docs/huggingface.md). The test prints both and tokens per second.

    Args:
      name: the test's name.
      program: an executorch_program with methods encoder and decoder.
      model: the hf_model (<name>, the whole model) whose components the program holds.
      cases: how many inputs; at least 2 covers a dynamic encoder's example and max.
      max_new_tokens: tokens to generate per input (fewer when the model ends the text).
      eos_cases: the cases (0 to cases - 1) whose text must end at an end id before
        max_new_tokens: a text cut at the limit cannot show that the program stops where the
        model stops, so name at least one case that ends.
      **kwargs: passed to the test (tags, size, timeout, ...).
    """
    _seq2seq_test(
        program = program,
        model = model,
        cases = cases,
        max_new_tokens = max_new_tokens,
        eos_cases = eos_cases,
        **config_target_attrs(name, EXPORTER_MODULES["seq2seq"], kwargs)
    )
