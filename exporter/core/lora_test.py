"""LoRA adapters: the math, the base weights' names, and each refusal of a checkpoint, a
PEFT folder or target_modules that does not fit, with its one-line message."""

import dataclasses
import json

import pytest
import torch
from safetensors.torch import save_file
from torch import nn

from exporter.core import lora
from exporter.core.errors import UserError


@dataclasses.dataclass(frozen=True)
class Adapter:
    label: str = "//pkg:poet"
    rank: int = 2
    alpha: float = 4.0
    target_modules: tuple = ("qkv",)
    checkpoint: str | None = None
    checkpoint_dir: str | None = None


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 12)
        self.mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))

    def forward(self, x):
        return self.qkv(x)[..., :8] + self.mlp(x)


def _model():
    torch.manual_seed(0)
    return nn.Sequential(Block(), Block()).eval()


def _factors(paths=("0.qkv", "1.qkv"), rank=2, out=12, into=8, prefix="", spelling="a"):
    g = torch.Generator().manual_seed(1)
    state = {}
    for path in paths:
        state[f"{prefix}{path}.lora_{spelling}.weight"] = torch.randn(rank, into, generator=g)
        state[f"{prefix}{path}.lora_{'B' if spelling == 'A' else 'b'}.weight"] = torch.randn(out, rank, generator=g)
    return state


def _saved(tmp_path, state, name="adapter.safetensors"):
    path = str(tmp_path / name)
    save_file(state, path) if name.endswith(".safetensors") else torch.save(state, path)
    return path


def _message(tmp_path, state=None, **changes):
    adapter = Adapter(**dict({"checkpoint": _saved(tmp_path, state if state is not None else _factors())}, **changes))
    with pytest.raises(UserError) as e:
        lora.apply(_model(), adapter)
    text = str(e.value)
    assert "\n" not in text and text.startswith("lora_model //pkg:poet: ")
    return text


@pytest.mark.parametrize("name", ["adapter.safetensors", "adapter.pt"])
def test_adds_the_scaled_low_rank_update_and_keeps_base_names(tmp_path, name):
    state = _factors()
    model = lora.apply(_model(), Adapter(checkpoint=_saved(tmp_path, state, name)))
    base = _model()
    x = torch.randn(3, 8)
    a, b = state["0.qkv.lora_a.weight"], state["0.qkv.lora_b.weight"]
    assert torch.allclose(model[0].qkv(x), base[0].qkv(x) + (x @ a.T @ b.T) * 2.0, atol=1e-6)
    names = dict(model.named_parameters())
    assert {n for n in names if lora.is_factor(n)} == {"0.qkv.lora_a", "0.qkv.lora_b", "1.qkv.lora_a", "1.qkv.lora_b"}
    assert all(torch.equal(names[n], p) for n, p in base.named_parameters())  # same names, same values
    assert not any(isinstance(m, nn.Linear) and not isinstance(m, lora.LoraLinear)
                   for n, m in model.named_modules() if lora.is_factor(n))  # factors stay out of quantize_


def test_reads_peft_names_and_folder(tmp_path):
    (tmp_path / "peft").mkdir()
    save_file(_factors(prefix="base_model.model.", spelling="A"), str(tmp_path / "peft" / lora.PEFT_WEIGHTS))
    (tmp_path / "peft" / lora.PEFT_CONFIG).write_text(json.dumps({"r": 2, "lora_alpha": 4.0, "target_modules": ["qkv"]}))
    model = lora.apply(_model(), Adapter(checkpoint_dir=str(tmp_path / "peft")))
    assert isinstance(model[1].qkv, lora.LoraLinear)


@pytest.mark.parametrize("changes, expected", [
    ({"target_modules": ("q_proj",)}, "target_modules has 'q_proj', which names no module of the base model; "
                                      "name its linear layers, e.g. '0', '2', 'qkv'"),
    ({"target_modules": ("mlp",)}, "target_modules has 'mlp', which names 0.mlp, a Sequential, not an nn.Linear"),
    ({"rank": 4}, "0.qkv.lora_a in 'adapter.safetensors' is [2, 8] but 0.qkv (8 -> 12) with rank = 4 needs [4, 8]; "
                  "set rank = 2"),
])
def test_refuses_targets_and_shapes_that_do_not_fit(tmp_path, changes, expected):
    assert expected in _message(tmp_path, **changes)


def test_refuses_checkpoints_that_do_not_fit(tmp_path):
    assert "has factors for 0.mlp.0, which target_modules does not name; add '0' to target_modules" in \
        _message(tmp_path, dict(_factors(), **_factors(("0.mlp.0",), out=16)))
    assert "has no 1.qkv.lora_a.weight" in _message(tmp_path, _factors(("0.qkv",)))
    assert "has 'head.bias', which is not a LoRA factor" in _message(tmp_path, dict(_factors(), **{"head.bias": torch.ones(2)}))
    bad = dict(_factors(), **{"0.qkv.lora_a.weight": torch.full((2, 8), float("nan"))})
    assert "0.qkv.lora_a in 'adapter.safetensors' holds inf or NaN" in _message(tmp_path, bad)
    ints = dict(_factors(), **{"0.qkv.lora_a.weight": torch.ones(2, 8, dtype=torch.int32)})
    assert "is torch.int32, not a float tensor" in _message(tmp_path, ints)


def test_refuses_a_file_that_is_not_a_state_dict(tmp_path):
    path = tmp_path / "adapter.safetensors"
    path.write_bytes(b"\x00\x01 not safetensors")
    with pytest.raises(UserError, match="checkpoint 'adapter.safetensors' is not a state dict that safetensors"):
        lora.apply(_model(), Adapter(checkpoint=str(path)))


def test_refuses_a_peft_folder_that_disagrees_with_the_target(tmp_path):
    save_file(_factors(), str(tmp_path / lora.PEFT_WEIGHTS))
    (tmp_path / lora.PEFT_CONFIG).write_text(json.dumps({"r": 2, "lora_alpha": 16, "target_modules": ["qkv"]}))
    with pytest.raises(UserError, match=r"adapter_config.json has lora_alpha = 16 but the target has alpha = 4.0; "
                                        r"set alpha = 16, as the adapter was trained"):
        lora.apply(_model(), Adapter(checkpoint_dir=str(tmp_path)))
    (tmp_path / lora.PEFT_CONFIG).unlink()
    (tmp_path / lora.PEFT_WEIGHTS).unlink()
    with pytest.raises(UserError, match="checkpoint_dir has no adapter_model.safetensors"):
        lora.apply(_model(), Adapter(checkpoint_dir=str(tmp_path)))
