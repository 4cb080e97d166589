"""LoRA adapters over a base model: y = W x + b + (alpha / rank) * B (A x).

apply(module, adapter) replaces each linear layer that target_modules names with a LoraLinear
that keeps the layer's own weight and bias under their names (so the base model's weights keep
their names, and a program can share them with the foundation's) and adds the factors lora_a
[rank, in] and lora_b [out, rank], read from the adapter's checkpoint. The factors are plain
parameters, not nn.Linear layers, so eager quantization (quantize = "8da4w") leaves them float.

A checkpoint is a state dict (.safetensors, or a file torch.load(weights_only=True) reads)
whose keys are `<module path>.lora_a.weight` and `<module path>.lora_b.weight` (torchtune's and
ExecuTorch's names; PEFT's `lora_A`/`lora_B` and its `base_model.model.` prefix are accepted),
or a folder in PEFT's layout: adapter_model.safetensors, and adapter_config.json whose r,
lora_alpha and target_modules must agree with the target's.
"""

import json
import os
import re

import torch
import torch.nn.functional as F
from torch import nn

from exporter.core.errors import UserError

# A program's own tensors, as opposed to its base model's: any name with one of these parts.
FACTOR_NAMES = ("lora_a", "lora_b")
PEFT_WEIGHTS, PEFT_CONFIG = "adapter_model.safetensors", "adapter_config.json"
_KEY = re.compile(r"^(?:base_model\.model\.)?(?P<module>.+)\.lora_(?P<factor>[abAB])(?:\.default)?\.weight$")


def is_factor(name):
    """Whether a parameter's dotted name is a LoRA factor (an adapter's own tensor)."""
    return any(part in FACTOR_NAMES for part in name.split("."))


class LoraLinear(nn.Linear):
    """A linear layer plus its low-rank update; weight and bias are the base layer's own."""

    def __init__(self, base, lora_a, lora_b, scale):
        nn.Module.__init__(self)  # not nn.Linear's: it would allocate and draw a new weight
        self.in_features, self.out_features = base.in_features, base.out_features
        self.weight, self.bias = base.weight, base.bias
        self.lora_a = nn.Parameter(lora_a, requires_grad=False)
        self.lora_b = nn.Parameter(lora_b, requires_grad=False)
        self.scale = scale

    def forward(self, x):
        return F.linear(x, self.weight, self.bias) + F.linear(F.linear(x, self.lora_a), self.lora_b) * self.scale


def _where(adapter):
    return f"lora_model {adapter.label}"


def _targets(module, adapter):
    """{module path: nn.Linear} that target_modules names (a name matches a path or its end)."""
    found, linears = {}, sorted({path.rpartition(".")[2] for path, m in module.named_modules() if isinstance(m, nn.Linear)})
    for target in adapter.target_modules:
        matches = {path: m for path, m in module.named_modules() if path == target or path.endswith("." + target)}
        if not matches:
            raise UserError(f"{_where(adapter)}: target_modules has {target!r}, which names no module of the base "
                            f"model; name its linear layers, e.g. {', '.join(map(repr, linears[:8])) or '(none)'}")
        for path, m in sorted(matches.items()):
            if not isinstance(m, nn.Linear):
                raise UserError(f"{_where(adapter)}: target_modules has {target!r}, which names {path}, a "
                                f"{type(m).__name__}, not an nn.Linear; name linear layers, e.g. "
                                f"{', '.join(map(repr, linears[:8]))}")
            found[path] = m
    return found


def _load_file(path, adapter):
    name = os.path.basename(path)
    try:
        if path.endswith(".safetensors"):
            from safetensors.torch import load_file

            state = load_file(path)
        else:
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise UserError(f"{_where(adapter)}: checkpoint {name!r} is not a state dict that safetensors or "
                        f"torch.load(weights_only=True) reads: {(str(e).splitlines() or [type(e).__name__])[0]}; "
                        f"save the adapter's weights with safetensors.torch.save_file or torch.save") from None
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise UserError(f"{_where(adapter)}: checkpoint {name!r} is not a dict of tensors; save a state dict "
                        f"of the LoRA factors")
    return state, name


def _check_peft_config(folder, adapter):
    path = os.path.join(folder, PEFT_CONFIG)
    if not os.path.exists(path):
        return
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
        given = {"r": config["r"], "lora_alpha": config["lora_alpha"], "target_modules": config["target_modules"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UserError(f"{_where(adapter)}: {PEFT_CONFIG} is not PEFT's adapter config with r, lora_alpha and "
                        f"target_modules ({type(e).__name__}: {e}); fix or remove it") from None
    ours = {"r": adapter.rank, "lora_alpha": adapter.alpha, "target_modules": sorted(adapter.target_modules)}
    theirs = dict(given, target_modules=sorted(given["target_modules"]) if isinstance(given["target_modules"], list)
                  else given["target_modules"])
    attr = {"r": "rank", "lora_alpha": "alpha", "target_modules": "target_modules"}
    for key in ("r", "lora_alpha", "target_modules"):
        if theirs[key] != ours[key]:
            raise UserError(f"{_where(adapter)}: {PEFT_CONFIG} has {key} = {theirs[key]!r} but the target has "
                            f"{attr[key]} = {ours[key]!r}; set {attr[key]} = {theirs[key]!r}, as the adapter was trained")


def read_factors(adapter):
    """({module path: {"a": tensor, "b": tensor}}, the checkpoint's file name) of the adapter."""
    path = adapter.checkpoint
    if adapter.checkpoint_dir is not None:
        _check_peft_config(adapter.checkpoint_dir, adapter)
        path = os.path.join(adapter.checkpoint_dir, PEFT_WEIGHTS)
        if not os.path.exists(path):
            raise UserError(f"{_where(adapter)}: checkpoint_dir has no {PEFT_WEIGHTS}; give PEFT's folder "
                            f"({PEFT_WEIGHTS}, {PEFT_CONFIG}) or set checkpoint to the adapter's file")
    state, name = _load_file(path, adapter)
    factors = {}
    for key, value in sorted(state.items()):
        match = _KEY.match(key)
        if not match:
            raise UserError(f"{_where(adapter)}: checkpoint {name!r} has {key!r}, which is not a LoRA factor "
                            f"(<module>.lora_a.weight or <module>.lora_b.weight); save only the adapter's factors")
        factors.setdefault(match["module"], {})[match["factor"].lower()] = value
    return factors, name


def _factor(path, kind, value, expected, layer, adapter, name):
    """value as the layer's dtype, after checking its shape, dtype and values."""
    if not value.is_floating_point():
        raise UserError(f"{_where(adapter)}: {path}.lora_{kind} in {name!r} is {value.dtype}, not a float tensor")
    if tuple(value.shape) != expected:
        rank = value.shape[0 if kind == "a" else -1] if value.dim() == 2 else None
        hint = f"set rank = {rank}" if rank and rank != adapter.rank else "use the adapter trained for this base model"
        raise UserError(f"{_where(adapter)}: {path}.lora_{kind} in {name!r} is {list(value.shape)} but "
                        f"{layer} with rank = {adapter.rank} needs {list(expected)}; {hint}")
    if not torch.isfinite(value).all():
        raise UserError(f"{_where(adapter)}: {path}.lora_{kind} in {name!r} holds inf or NaN; retrain or re-save the adapter")
    return value.to(torch.float32).contiguous()


def apply(module, adapter):
    """module with adapter's LoRA factors on its target layers, in place (and returned)."""
    targets = _targets(module, adapter)
    factors, name = read_factors(adapter)
    extra = sorted(set(factors) - set(targets))
    if extra:
        raise UserError(f"{_where(adapter)}: checkpoint {name!r} has factors for {extra[0]}, which target_modules "
                        f"does not name; add {extra[0].rpartition('.')[2]!r} to target_modules")
    scale = adapter.alpha / adapter.rank
    for path, layer in sorted(targets.items()):
        given = factors.get(path, {})
        missing = [k for k in ("a", "b") if k not in given]
        if missing:
            raise UserError(f"{_where(adapter)}: checkpoint {name!r} has no {path}.lora_{missing[0]}.weight; give "
                            f"both factors of every layer target_modules names")
        text = f"{path} ({layer.in_features} -> {layer.out_features})"
        a = _factor(path, "a", given["a"], (adapter.rank, layer.in_features), text, adapter, name)
        b = _factor(path, "b", given["b"], (layer.out_features, adapter.rank), text, adapter, name)
        parent_path, _, child = path.rpartition(".")
        parent = module.get_submodule(parent_path) if parent_path else module
        setattr(parent, child, LoraLinear(layer, a, b, scale))
    return module
