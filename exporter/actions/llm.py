"""What ExecuTorch's LLM runner (TextLLMRunner) reads from a program besides `forward(tokens,
input_pos)`: its constant methods, written by the lowering of an llm_program from the exported
program and the tokenizer's manifest, and checked where the runner would refuse or misbehave.

    get_max_seq_len, get_max_context_len   the prompt-and-output limits the runner enforces
    get_vocab_size                         the logits' last dim (the exported forward's output)
    get_bos_id, get_eos_ids                an hf_model's own (its generation config, recorded by
                                           the export), else the tokenizer target's
                                           (actions/tokenizer.py); core/special_tokens.py
    use_kv_cache                           True: the program keeps its cache
    enable_dynamic_shape                   True: forward takes 1 to max_seq_len - 1 tokens; False
                                           (a backend of static shapes, its record says): one
                                           token per call, and the runner prefills token by token
"""

import json

import torch

from exporter.core import special_tokens
from exporter.core.errors import UserError


def _logits_size(ep, label):
    output = next(n for n in ep.graph.nodes if n.op == "output").args[0]
    first = output[0] if isinstance(output, (list, tuple)) else output
    value = first.meta.get("val") if hasattr(first, "meta") else None
    if not isinstance(value, torch.Tensor) or value.dim() < 2 or not isinstance(value.shape[-1], int):
        raise UserError(f"llm_program {label}: forward's first output is not logits [1, seq, vocab] with a "
                        f"fixed vocab; the runner reads the next token from it")
    return int(value.shape[-1])


def _read(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def special_ids(config):
    """(bos id, eos ids, where each came from) of a LowerConfig with .llm, checked against the
    tokenizer (core/special_tokens.py)."""
    llm = config.llm
    tokenizer = _read(llm.tokenizer.manifest)
    model = None
    if llm.model_manifest:
        exported = _read(llm.model_manifest)
        model = dict(exported["generation"], label=exported["model"]["label"]) if "generation" in exported else None
    return special_tokens.program_ids(config.label, tokenizer, model)


def manifest_record(config):
    """The program manifest's "special_ids": where get_bos_id and get_eos_ids came from."""
    return {"special_ids": special_ids(config)[2]}


def constants(config, programs):
    """The runner's constant methods for a LowerConfig with .llm, checked."""
    llm, label = config.llm, config.label
    if set(programs) != {"forward"}:
        raise UserError(f"llm_program {label}: the runner calls one method, forward; the program has {sorted(programs)}")
    tokenizer = _read(llm.tokenizer.manifest)
    bos, eos, _ = special_ids(config)
    vocab = _logits_size(programs["forward"], label)
    if tokenizer["vocab_size"] > vocab:
        raise UserError(f"llm_program {label}: tokenizer {llm.tokenizer.label} has {tokenizer['vocab_size']} "
                        f"tokens but the model's logits have {vocab}; use the tokenizer the model was trained "
                        f"with, or a model whose vocabulary (embedding and output) has at least "
                        f"{tokenizer['vocab_size']} entries")
    return {
        "get_max_seq_len": llm.max_seq_len,
        "get_max_context_len": llm.max_context_len,
        "get_vocab_size": vocab,
        "get_bos_id": bos,
        "get_eos_ids": eos,
        "use_kv_cache": True,
        "enable_dynamic_shape": not llm.static_shape,
    }


def check_context(config, ep):
    """Fails unless the exported forward takes a token at the last position the runner may
    write, max_context_len - 1: a model whose cache (or position table) is shorter would write
    out of bounds on a device. Runs one token through the exported program, after lowering."""
    last = config.llm.max_context_len - 1
    try:
        with torch.no_grad():
            ep.module()(torch.zeros(1, 1, dtype=torch.long), torch.tensor([last]))
    except (IndexError, RuntimeError) as e:
        raise UserError(f"llm_program {config.label}: the model cannot take a token at position {last} "
                        f"(max_context_len - 1): {str(e).splitlines()[0]}; set max_seq_len (and "
                        f"max_context_len) to at most the model's cache length") from e
