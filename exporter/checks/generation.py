"""The runner behind llm_generation_test: an llm_program generates, greedily, in ExecuTorch's
LLM runner (TextLLMRunner: C++ code behind Python bindings, the runner of ExecuTorch's demo
apps) and in the native runner (//native:et_runner --generate), and both must give the eager
model's tokens, token for token. Prints each prompt's text and tokens per second.

The prompt is encoded by the runner's own tokenizer library without begin or end tokens, and
every side generates until an end id or max_new_tokens (capped so that prompt and output fit in
get_max_context_len). The eager side is the model's own generation, stop included: for an
hf_model, transformers' generate() (greedy, ending at the model's generation config's end ids);
for another model, the model called as the runner calls the program (its logits' last row gives
the first new token, then one token per call at the next position), ending at the tokenizer's end
ids. Each of eos_prompts must end at an end id before the limit: a text cut at the limit cannot
show that the runner stops where the model does.
"""

import contextlib
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
import time

import torch

from exporter.actions import tokenizer
from exporter.checks import contract, etvals, greedy, native
from exporter.core import backend_site, release_site, releases, runtime_kernels, runtime_process, special_tokens
from exporter.formats import pte_inspect


def eager_tokens(model, prompt, count, eos_ids):
    """Greedy ids after `prompt` (ids) from the eager model, called as the runner calls the
    program: the prompt in one call, then one token per call at the next position."""

    def next_logits(ids):
        if not ids:
            return model(torch.tensor([prompt]), torch.arange(len(prompt)))
        return model(torch.tensor([ids[-1:]]), torch.tensor([len(prompt) + len(ids) - 1]))

    with torch.no_grad():
        return greedy.tokens(next_logits, count, eos_ids)


def runner_pieces(config, prompt, count):
    """(pieces the LLM runner's token callback gave, seconds to the first, seconds between the
    first and the last)."""
    from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner

    runtime_kernels.register(pte_inspect.operator_names(config.pte))
    runner = TextLLMRunner(config.pte, config.tokenizer["file"], config.ptd) if config.ptd else \
        TextLLMRunner(config.pte, config.tokenizer["file"])
    settings = GenerationConfig()
    settings.max_new_tokens, settings.temperature, settings.echo = count, 0.0, False
    return timed_pieces(lambda on_token: runner.generate(prompt, settings, token_callback=on_token))


def child_tokens(child, config, prompt, count, ends):
    """(ids, ExecuTorch version, seconds to the first, seconds between the first and the last) of
    the program's forward, called as the LLM runner calls it (eager_tokens' loop), in the Python
    runtime of a release whose runtimes need another torch: `child`, a
    runtime_process.ChildRuntime on its venv. 1.3.1's LLM runner reads tokenizer.json otherwise
    than the tokenizer does (docs/compatibility.md), so the ids go in and out as the native runner
    takes them. The program is loaded again for each prompt: its KV cache starts from the .pte's."""
    child.load(config.pte, config.ptd, ["forward"])
    times = []

    def forward(tokens, positions):
        logits = child.call("forward", [tokens, positions])[0]
        times.append(time.perf_counter())
        return logits

    start = time.perf_counter()
    ids = eager_tokens(forward, prompt, count, ends)
    return ids, child.version, (times[0] - start if times else 0.0), (times[-1] - times[0] if times else 0.0)


def timed_pieces(generate):
    """(pieces a runner's token callback gave, seconds to the first, seconds between the first and
    the last) of generate(on_token), which runs one generation."""
    pieces, times = [], []

    def on_token(piece):
        times.append(time.perf_counter())
        pieces.append(piece)

    start = time.perf_counter()
    generate(on_token)
    return pieces, (times[0] - start if times else 0.0), (times[-1] - times[0] if times else 0.0)


def native_tokens(config, prompt, count, arm64=False):
    """(ids, report) from the native runner's --generate (median of 3 runs after 1 warm-up), or
    from its arm64 build under qemu (one run: emulated speed means nothing)."""
    with tempfile.TemporaryDirectory(prefix="generate-") as folder:
        given, got, report = (os.path.join(folder, f) for f in ("prompt.etvals", "tokens.etvals", "report.json"))
        etvals.write(given, [torch.tensor(prompt, dtype=torch.long)])
        runner = config.arm64_runner if arm64 else config.native_runner
        command = [os.path.abspath(runner), config.pte, "--generate", f"forward={given}:{got}",
                   "--max-new-tokens", str(count), "--json", report, *native.deadline_arguments()]
        command += [] if arm64 else ["--bench", "--warmup", "1", "--iterations", "3"]
        command += ["--data", config.ptd] if config.ptd else []
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            lines = [line for line in result.stderr.splitlines() if line.startswith(("et_runner:", "rules_torch_export:"))]
            raise ValueError(f"the {'arm64' if arm64 else 'native'} runner failed: "
                             f"{(lines or result.stderr.strip().splitlines() or ['?'])[-1]}")
        with open(report, encoding="utf-8") as f:
            return [int(i) for i in etvals.read(got)[0].tolist()], json.load(f)["generate"]


def check_ids(config, ids, who, vocab_size):
    """Fails in one line when `who` generated an id the tokenizer does not have: a vocabulary
    padded past the tokenizer's, whose padding the model does not mask. (The tokenizer's own
    decode fails with a bare DecodeFailure, in ExecuTorch's runner as in Python.)"""
    outside = [token for token in ids if not 0 <= token < vocab_size]
    if outside:
        raise ValueError(f"{config.program} generates token id {outside[0]} ({who}), which tokenizer "
                         f"{config.tokenizer['label']} does not have: it has {vocab_size} tokens, ids 0 to "
                         f"{vocab_size - 1}; mask the model's logits past id {vocab_size - 1} (a padded "
                         f"vocabulary), or use the tokenizer the model was trained with")


def arm64_line(config, ids, count, expected):
    """(same tokens as eager, the report's line) of the arm64 runner, under qemu."""
    arm64, _ = native_tokens(config, ids, count, arm64=True)
    same = arm64[:len(expected)] == expected
    return same, (f"    arm64 runner (under qemu): {'same tokens' if same else f'DIFFERENT: {arm64}'}; one run, "
                  f"no tokens/s (emulated)")


def quantized_as_exported(module, config):
    """module, quantized in place as the program's export quantized it: its tables first, then its
    linears (exporter/actions/export.py's order)."""
    from exporter.actions import eager_quantize

    schemes = config.quantized
    if schemes.get("embedding_quantize"):
        eager_quantize.quantize_embeddings(module, schemes["embedding_quantize"], config.model.label)
    if schemes.get("quantize"):
        eager_quantize.apply(module, schemes["quantize"], schemes["group_size"], config.model.label)
    return module


def _quantization_words(schemes):
    words = ([f"{schemes['quantize']} (group {schemes['group_size']})"] if schemes.get("quantize") else []) + \
        ([f"embeddings {schemes['embedding_quantize']}"] if schemes.get("embedding_quantize") else [])
    return f", quantized as the export: {', '.join(words)}" if words else ""


def eager_reference(config, tokenizer_eos_ids):
    """(generate(prompt ids, count) -> ids, the end ids it stops at, what it is, for the report):
    transformers' generate() for an hf_model (greedy, its generation config's end ids: where the
    model's own text ends), else the eager model called as the runner calls the program, stopping
    at the tokenizer's end ids; either quantized as the program's export was."""
    from exporter.core.model_loader import load_model

    quantized = _quantization_words(config.quantized)
    if config.model.kind == "hf_model":
        model = quantized_as_exported(load_model(config.model).causal_lm(), config)
        ends = special_tokens.as_list(model.generation_config.eos_token_id)

        def generate(ids, count):
            inputs = {"input_ids": torch.tensor([ids]), "attention_mask": torch.ones(1, len(ids), dtype=torch.long)}
            return greedy.transformers_tokens(model, inputs, count)

        return generate, ends, f"transformers' generate() of {config.model.label} (greedy, end ids {ends}{quantized})"
    return (lambda ids, count: eager_tokens(quantized_as_exported(load_model(config.model), config), ids, count,
                                            tokenizer_eos_ids),  # a fresh cache each
            tokenizer_eos_ids, f"the eager model {config.model.label}{quantized}")


def _context(config):
    """What every prompt's case needs: {tokenizer, vocab_size, max_seq_len, max_context_len,
    generate, ends}, and the report's first line."""
    with open(config.tokenizer["manifest"], encoding="utf-8") as f:
        tokenizer_manifest = json.load(f)
    with open(config.manifest, encoding="utf-8") as f:
        constants = json.load(f)["constant_methods"]
    if "get_max_context_len" not in constants:
        raise ValueError(f"{config.program} has no get_max_context_len; make it with llm_program")
    generate, ends, reference = eager_reference(config, tokenizer_manifest["eos_ids"])
    context = {"tokenizer": tokenizer.load(config.tokenizer["file"], config.tokenizer["format"], config.tokenizer["label"]),
               "vocab_size": tokenizer_manifest["vocab_size"], "max_seq_len": constants["get_max_seq_len"],
               "max_context_len": constants["get_max_context_len"], "generate": generate, "ends": ends}
    native_runner = (f" and the native runner ({config.native_runner_label}"
                     f"{', and on arm64' if config.arm64_runner else ''})") if config.native_runner else \
        " (not the native runner: runtimes leaves it out)"
    python = "'s Python runtime (its own venv; forward called token by token)" if config.runtime_python else \
        "'s LLM runner (TextLLMRunner)"
    return context, (f"{config.label}: {config.program} in {_runtime_text(config)}{python}"
                     f"{native_runner}, greedy, against {reference}")


def _runtime_text(config):
    """"ExecuTorch 1.4.1", the version whose runtimes run: a test of a release checks that it is
    that release's (its packages first on the import path)."""
    if config.runtime_python:  # its child process checks the version it ran (_child_line)
        return f"ExecuTorch {releases.BY_NAME[config.release].version}"
    version = importlib.metadata.version("executorch")
    releases.check_ran(config.program, config.release, version)
    return f"ExecuTorch {version}"


def _runner_line(config, prompt, count, pieces, vocab_size):
    """(same pieces as eager, the report's line) of ExecuTorch's LLM runner."""
    try:
        got, first, rest = runner_pieces(config, prompt, count)
    except RuntimeError as e:  # its tokenizer's DecodeFailure, say, for an id it generated itself
        raise ValueError(f"ExecuTorch's LLM runner fails on {config.program} with tokenizer "
                         f"{config.tokenizer['label']} ({vocab_size} tokens): {str(e).strip().splitlines()[0]}"
                         f"{releases.crossing_note(config.program_release, config.release)}") from e
    same = got == pieces
    return same, f"    LLM runner: {'same tokens' if same else 'DIFFERENT: ' + repr(''.join(got))}; {_speed(got, first, rest)}"


def _child_line(config, context, ids, count, expected):
    """(same ids as eager, the report's line) of the release's Python runtime in its own venv."""
    try:
        got, version, first, rest = child_tokens(context["child"], config, ids, count, context["ends"])
    except RuntimeError as e:  # the runtime refused the program, or its process ended
        raise ValueError(f"{_runtime_text(config)}'s Python runtime fails on {config.program}: "
                         f"{(str(e).strip().splitlines() or ['?'])[0]}"
                         f"{releases.crossing_note(config.program_release, config.release)}") from e
    releases.check_ran(config.program, config.release, version)
    same = got == expected
    return same, (f"    Python runtime (ExecuTorch {version}): {'same tokens' if same else f'DIFFERENT: {got}'}; "
                  f"{_speed(got, first, rest)}")


def _speed(tokens, first, rest):
    """"first token after 2.0 ms, 900 tokens/s after it"."""
    rate = f", {(len(tokens) - 1) / rest:.0f} tokens/s after it" if rest > 0 else ""
    return f"first token after {first * 1000:.1f} ms{rate}"


def _case(config, context, prompt, must_end):
    """(the runners give eager's tokens, the text ends if it must, report lines) of one prompt;
    must_end: one of eos_prompts, whose text must end at an end id before max_new_tokens."""
    ids = context["tokenizer"].encode(prompt, 0, 0)
    if not 0 < len(ids) < context["max_seq_len"]:
        raise ValueError(f"prompt {prompt!r} is {len(ids)} tokens; {config.program} takes 1 to "
                         f"{context['max_seq_len'] - 1} (max_seq_len - 1): shorten it in prompts")
    count = min(config.max_new_tokens, context["max_context_len"] - len(ids))
    expected = context["generate"](ids, count)
    check_ids(config, expected, "the model's, eager", context["vocab_size"])
    if config.native_runner:  # before the LLM runner, which decodes them
        native, figures = native_tokens(config, ids, count)
        check_ids(config, native[:len(expected)], "the native runner's", context["vocab_size"])  # it runs past an end id
    pieces = [context["tokenizer"].decode(token) for token in expected]  # as the runner's callback gets them
    ended = greedy.ended(expected, context["ends"], count)
    lines = [f"  prompt {prompt!r} ({len(ids)} tokens): eager continues {''.join(pieces)!r} ({len(expected)} tokens"
             f"{f', ended by end id {expected[-1]}' if ended else ''})"]
    if must_end and not ended:
        lines.append(f"    must end at an end id {context['ends']} within {count} tokens (eos_prompts), but eager runs to "
                     f"the limit: give eos_prompts a prompt whose text ends, or more max_new_tokens")
    ok, line = _child_line(config, context, ids, count, expected) if config.runtime_python else \
        _runner_line(config, prompt, count, pieces, context["vocab_size"])
    lines.append(line)
    if config.native_runner:
        same = native[:len(expected)] == expected
        ok = ok and same
        lines.append(f"    native runner: {'same tokens' if same else f'DIFFERENT: {native}'}; prefill "
                     f"{figures['prefill_tokens_per_s']:.0f} tokens/s, decode "
                     f"{figures['decode_tokens_per_s']:.0f} tokens/s (median of {figures['runs']} runs)")
    if config.arm64_runner:
        same, line = arm64_line(config, ids, count, expected)
        ok, lines = ok and same, lines + [line]
    return ok, ended or not must_end, lines


def run(config):
    """(ok, report text) of a contract.GenerationTestConfig."""
    if config.executorch_layer:  # a release's runtimes: before anything imports ExecuTorch
        release_site.activate(config.executorch_layer)
    context, first = _context(config)
    backend_site.activate(config.backend_packages)  # before the runner loads the program
    lines, agree, end = [first], True, True
    # One child for every prompt (a start imports its torch and ExecuTorch: about 9 s here).
    with runtime_process.ChildRuntime(config.runtime_python) if config.runtime_python else contextlib.nullcontext() as child:
        context["child"] = child
        for prompt, must_end in [(p, False) for p in config.prompts] + [(p, True) for p in config.eos_prompts]:
            same, ends, case_lines = _case(config, context, prompt, must_end)
            agree, end, lines = agree and same, end and ends, lines + case_lines
    if not agree:
        lines.append("The program does not generate what the model generates: check the model's forward against "
                     "the runner's contract (docs/llm.md), then the numerics_test of the program.")
    return agree and end, "\n".join(lines) + "\n"


def main(argv):
    return contract.main(argv, contract.GenerationTestConfig, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
