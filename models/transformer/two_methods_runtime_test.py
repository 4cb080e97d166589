"""Loads //models/transformer:transformer_two_methods_pte as an app does, with executorch.runtime:
both methods run and match eager, the metadata and the input schema are readable without running
the model, and the weights that both methods use are stored once. transformer_mixed_pte lowers
the same methods with one backend list each: only forward is delegated."""

import json

import pytest
import torch
from executorch.runtime import Runtime
from runfiles import Runfiles

from exporter.formats import pte_inspect

from models.transformer.encoder import transformer_encoder

RUNFILES = Runfiles.Create()


def _path(name):
    return RUNFILES.Rlocation(f"rules_torch_export/models/transformer/{name}")


@pytest.fixture(scope="module")
def program():
    return Runtime.get().load_program(_path("transformer_two_methods_pte.pte"))


def _inputs(batch, seq, vocab):
    generator = torch.Generator().manual_seed(seq)
    ids = torch.randint(0, vocab, (batch, seq), generator=generator)
    return ids, torch.ones(batch, seq, dtype=torch.bool)


def test_the_program_has_both_methods_and_its_constants(program):
    assert program.method_names == {"forward", "batched", "input_schema", "model_version", "classes"}


@pytest.mark.parametrize("method, batch, seq", [("forward", 1, 9), ("batched", 3, 17), ("batched", 8, 64)])
def test_each_method_matches_eager(program, method, batch, seq):
    eager = transformer_encoder(num_classes=4, max_len=64)
    ids, mask = _inputs(batch, seq, eager.tokens.num_embeddings)
    (actual,) = program.load_method(method).execute([ids, mask])
    with torch.no_grad():
        expected = eager(ids, mask)
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-5)


def test_metadata_and_input_schema_read_without_running_the_model(program):
    assert program.load_method("model_version").execute([]) == [3]
    assert program.load_method("classes").execute([]) == ["negative,neutral,positive,mixed"]
    (text,) = program.load_method("input_schema").execute([])
    schema = json.loads(text)
    assert schema["batched"]["dims"] == {"batch": {"min": 1, "max": 8}, "seq": {"min": 2, "max": 64}}
    assert [i["name"] for i in schema["forward"]["inputs"]] == ["input_ids", "attention_mask"]
    assert schema["forward"]["inputs"][1] == {"name": "attention_mask", "dtype": "bool", "shape": [1, "seq"]}


def test_shared_weights_are_stored_once():
    both = pte_inspect.summarize(_path("transformer_two_methods_pte.pte"))["constants"]
    one = pte_inspect.summarize(_path("transformer_batch_portable_pte.pte"))["constants"]
    assert both["tensors"] == one["tensors"] and both["bytes"] == one["bytes"]


def test_backends_per_method_delegate_only_the_method_that_names_xnnpack():
    with open(_path("transformer_mixed_pte.pte.json")) as f:
        methods = json.load(f)["methods"]
    assert list(methods["forward"]["delegates"]) == ["XnnpackBackend"]
    assert methods["batched"]["delegates"] == {} and methods["batched"]["operators"]
    mixed = Runtime.get().load_program(_path("transformer_mixed_pte.pte"))
    eager = transformer_encoder(num_classes=4, max_len=64)
    for method, batch in (("forward", 1), ("batched", 3)):
        ids, mask = _inputs(batch, 17, eager.tokens.num_embeddings)
        (actual,) = mixed.load_method(method).execute([ids, mask])
        with torch.no_grad():
            torch.testing.assert_close(actual, eager(ids, mask), rtol=1e-4, atol=1e-5)
