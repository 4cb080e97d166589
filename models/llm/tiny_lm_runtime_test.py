"""Generates text with //models/llm:tiny_lm_pte as an app does, and compares with eager."""

import json
import os

import pytest
import torch
from executorch.runtime import Runtime
from runfiles import Runfiles

from models.llm.tiny_lm import generate, tiny_lm

RUNFILES = Runfiles.Create()
PROMPT = [3, 14, 15, 9, 26, 53]
COUNT = 12


def _path(name):
    return RUNFILES.Rlocation(f"rules_torch_export/models/llm/{name}")


def _app(program_file):
    """(prefill, decode) of a program, both loaded before the first call, as an app loads them."""
    program = Runtime.get().load_program(_path(program_file))
    prefill, decode = program.load_method("prefill"), program.load_method("decode")
    return (lambda tokens, start: prefill.execute([tokens, start])[0],
            lambda tokens, start: decode.execute([tokens, start])[0])


@pytest.fixture(scope="module")
def eager_tokens():
    with torch.no_grad():
        model = tiny_lm()
        return generate(model, model, PROMPT, COUNT)


def test_the_program_generates_the_eager_tokens(eager_tokens):
    tokens = generate(*_app("tiny_lm_pte.pte"), PROMPT, COUNT)
    print(f"eager   {eager_tokens}\nprogram {tokens}")
    assert tokens == eager_tokens


def test_decode_reads_what_prefill_wrote():
    """The cache is the program's: decode after prefill differs from decode on a fresh program."""
    prefill, decode = _app("tiny_lm_pte.pte")
    prefill(torch.tensor([PROMPT]), torch.tensor([0]))
    after_prompt = decode(torch.tensor([[7]]), torch.tensor([len(PROMPT)]))
    _, fresh_decode = _app("tiny_lm_pte.pte")
    fresh = fresh_decode(torch.tensor([[7]]), torch.tensor([len(PROMPT)]))
    assert (after_prompt - fresh).abs().max() > 1e-2


def test_the_manifest_lists_the_shared_initialised_caches():
    with open(_path("tiny_lm_pte.pte.json"), encoding="utf-8") as f:
        buffers = json.load(f)["mutable_buffers"]
    assert sorted(buffers) == [f"blocks.{b}.{kv}_cache" for b in (0, 1) for kv in ("k", "v")]
    for record in buffers.values():
        assert record["methods"] == ["decode", "prefill"]
        assert record["initialized"] is True
        assert record["shape"] == [1, 4, 32, 16] and record["bytes"] == 4 * 32 * 16 * 4


def test_int8_weights_are_smaller_and_mostly_agree(eager_tokens):
    float_size = os.path.getsize(_path("tiny_lm_pte.pte"))
    q8_size = os.path.getsize(_path("tiny_lm_q8_pte.pte"))
    tokens = generate(*_app("tiny_lm_q8_pte.pte"), PROMPT, COUNT)
    same = sum(a == b for a, b in zip(tokens, eager_tokens))
    print(f"float .pte {float_size} B, int8 .pte {q8_size} B ({float_size / q8_size:.2f}x smaller); "
          f"int8 tokens {tokens}, {same}/{COUNT} equal to eager's")
    # The weights shrink about 4x; the caches' initial values, constants and plan do not.
    assert q8_size < 0.6 * float_size
    assert tokens[0] == eager_tokens[0]  # the prompt's next token; later ones may drift apart
