"""What an app ships for the base and two LoRA adapters (//models/llm:tiny_lm_lora_bundle): the
foundation's .ptd once, named by every program's entry, and each program, loaded from the
bundle with that .ptd in ExecuTorch's runtime, computes its own model: base plus its adapter."""

import json
import os
from types import SimpleNamespace

import pytest
import torch
from executorch.runtime import Runtime

from exporter.core import lora
from models.llm.runner_lm import tiny_lm_for_runner

BUNDLE = "models/llm/tiny_lm_lora_bundle"
ADAPTERS = {
    "//models/llm:tiny_lm_poet_llm": dict(rank=4, alpha=8.0, target_modules=("qkv", "out"),
                                          checkpoint="models/llm/lora/poet.safetensors", checkpoint_dir=None),
    "//models/llm:tiny_lm_coder_llm": dict(rank=8, alpha=16.0, target_modules=("qkv", "out", "mlp.0", "mlp.2"),
                                           checkpoint=None, checkpoint_dir="models/llm/lora/coder"),
}


def _index():
    with open(os.path.join(BUNDLE, "index.json"), encoding="utf-8") as f:
        return json.load(f)["programs"]


def test_the_foundation_is_shipped_once_and_named_by_every_program():
    programs = _index()
    assert sorted(programs) == sorted(["//models/llm:tiny_lm_base_llm", *ADAPTERS])
    ptds = [name for name in os.listdir(BUNDLE) if name.endswith(".ptd")]
    assert len(ptds) == 1
    assert {entry["ptd"]["file"] for entry in programs.values()} == set(ptds)
    for label in ADAPTERS:
        record = programs[label]["foundation"]
        assert record["label"] == "//models/llm:tiny_lm_foundation" and record["own"]["tensors"] > 0
        assert programs[label]["size"] < record["ptd"]["size"] / 4  # the .pte holds the factors, not the base
    assert "foundation" not in programs["//models/llm:tiny_lm_base_llm"]  # the foundation is its .ptd


def _eager(label):
    model = tiny_lm_for_runner(dim=128)
    if label in ADAPTERS:
        lora.apply(model, SimpleNamespace(label=label, **ADAPTERS[label]))
    return model.eval()


@pytest.mark.parametrize("label", ["//models/llm:tiny_lm_base_llm", *ADAPTERS])
def test_each_program_from_the_bundle_computes_its_own_model(label):
    entry = _index()[label]
    tokens, positions = torch.tensor([[5, 17, 33, 40, 2, 9]]), torch.arange(6)
    program = Runtime.get().load_program(os.path.join(BUNDLE, entry["file"]),
                                         data_path=os.path.join(BUNDLE, entry["ptd"]["file"]))
    got = program.load_method("forward").execute([tokens, positions])[0]
    with torch.no_grad():
        expected, base = _eager(label)(tokens, positions), _eager("base")(tokens, positions)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-4)
    if label in ADAPTERS:  # the adapter changes what the model computes
        assert (got - base).abs().max() > 0.1
