"""The runner behind seq2seq_generation_test: an encoder-decoder program (hf_model's encoder and
decoder methods) transcribes or translates greedily in ExecuTorch's runtime, and every token must
be the eager model's, for each of the test's inputs, the stop included.

The program's side is what an app does: the encoder method once, then the decoder method one
token at a time from the config's decoder_start_token_id, at cache positions 0, 1, ..., until an
end id (its eos_token_id) or max_new_tokens. The eager side is transformers' generate()
of the whole model (hf_model's <name>), greedy, from the same start to the same ends: the model
as it was trained, not our modules. Each of eos_cases must end at an end id before the limit.
"""

import sys
import time

import torch

from exporter.checks import contract, greedy
from exporter.core.case_inputs import full_sizes, make_inputs
from exporter.core.special_tokens import as_list


def program_tokens(methods, inputs, start, ends, count):
    """(greedy ids from the program's encoder and decoder methods, seconds per token)."""
    encode, decode = methods
    states = encode(list(inputs.values()))[0]
    began = time.perf_counter()
    ids = greedy.tokens(lambda ids: decode([torch.tensor([[ids[-1] if ids else start]]), states,
                                            torch.tensor([len(ids)])])[0], count, ends)
    return ids, (time.perf_counter() - began) / max(len(ids), 1)


def cases(config):
    """[(name, inputs)]: the encoder's spec at its examples, then each dynamic dim at its max,
    seeded differently, config.cases of them."""
    dims = config.encoder_spec.get("dims", {})
    found = []
    for index in range(config.cases):
        sizes = {name: d.get("max") or d.get("example") for name, d in dims.items()} if index % 2 else {}
        sizes = full_sizes(config.encoder_spec, sizes)
        name = f"input {index}" + (" (" + ", ".join(f"{k}={v}" for k, v in sorted(sizes.items())) + ")" if sizes else "")
        found.append((name, make_inputs(config.encoder_spec, sizes, seed=index)))
    return found


def run(config):
    """Every case in the program and in the eager model; returns (ok, report)."""
    from executorch.runtime import Runtime

    from exporter.core.model_loader import load_model

    model = load_model(config.model)
    program = Runtime.get().load_program(config.pte, data_path=config.ptd)
    methods = (program.load_method("encoder").execute, program.load_method("decoder").execute)
    start, ends = model.generation_config.decoder_start_token_id, as_list(model.generation_config.eos_token_id)
    lines = [f"{config.label}: {config.program}'s encoder and decoder in ExecuTorch's runtime vs transformers' "
             f"generate() of {config.model.label}, greedy from {start} to an end id {ends}, up to "
             f"{config.max_new_tokens} tokens"]
    agree, end = True, True
    for index, (name, inputs) in enumerate(cases(config)):
        want = greedy.transformers_tokens(model, inputs, config.max_new_tokens)
        got, seconds = program_tokens(methods, inputs, start, ends, config.max_new_tokens)
        ended = greedy.ended(want, ends, config.max_new_tokens)
        agree &= got == want
        lines.append(f"  {name}: eager {want}{' (ended)' if ended else ''}")
        lines.append(f"  {name}: program {got} ({1 / seconds:.0f} tokens/s)  {'ok' if got == want else 'FAIL'}")
        if index in config.eos_cases and not ended:
            end = False
            lines.append(f"  {name} must end at an end id {ends} within {config.max_new_tokens} tokens (eos_cases), "
                         f"but eager runs to the limit: name a case whose text ends in eos_cases")
    if not agree:
        lines.append(f"The program's tokens are not the eager model's: check {config.label}'s program "
                     f"against its numerics tests (encoder and decoder methods).")
    return agree and end, "\n".join(lines) + "\n"


def main(argv):
    """seq2seq_generation_test's main."""
    return contract.main(argv, contract.Seq2SeqGenerationConfig, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
