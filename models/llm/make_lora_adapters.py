"""Writes the zoo's two LoRA adapters over tiny_lm_runner (dim 128), models/llm/lora/, the two
ways fine-tunes arrive: poet.safetensors, a file of factors named <layer>.lora_a.weight and
.lora_b.weight (torchtune's names; rank 4 on qkv and out), and coder/, a PEFT folder
(adapter_model.safetensors with PEFT's names, adapter_config.json; rank 8 on every linear layer
of the blocks). The factors are seeded draws, made in float64 and rounded once, so the files
are the same on every machine; //models/llm:generated_files_test checks they are this
script's output.

    python models/llm/make_lora_adapters.py models/llm/lora
"""

import json
import os
import sys

# name -> (seed, rank, alpha, target_modules, PEFT layout)
ADAPTERS = {
    "poet": (1, 4, 8, ["qkv", "out"], False),
    "coder": (2, 8, 16, ["qkv", "out", "mlp.0", "mlp.2"], True),
}
SCALE = 0.1  # the factors' spread: their update is then as large as the base weights


def _layers(targets):
    """(path, in, out) of the base model's linear layers that targets name."""
    from torch import nn

    from models.llm.runner_lm import tiny_lm_for_runner

    model = tiny_lm_for_runner(dim=128)
    return [(path, m.in_features, m.out_features) for path, m in model.named_modules()
            if isinstance(m, nn.Linear) and any(path == t or path.endswith("." + t) for t in targets)]


def factors(seed, rank, targets, peft):
    """{key: tensor} of one adapter's factors."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    draw = lambda *shape: (torch.randn(*shape, generator=generator, dtype=torch.float64) * SCALE).float()
    state = {}
    for path, fan_in, fan_out in _layers(targets):
        a, b = ("base_model.model." + path + ".lora_A", "base_model.model." + path + ".lora_B") if peft else \
            (path + ".lora_a", path + ".lora_b")
        state[a + ".weight"] = draw(rank, fan_in)
        state[b + ".weight"] = draw(fan_out, rank)
    return state


def write(folder):
    from safetensors.torch import save_file

    for name, (seed, rank, alpha, targets, peft) in ADAPTERS.items():
        state = factors(seed, rank, targets, peft)
        if not peft:
            save_file(state, os.path.join(folder, name + ".safetensors"))
            continue
        os.makedirs(os.path.join(folder, name), exist_ok=True)
        save_file(state, os.path.join(folder, name, "adapter_model.safetensors"))
        config = {"base_model_name_or_path": "tiny_lm_runner", "lora_alpha": alpha, "peft_type": "LORA", "r": rank,
                  "target_modules": targets}
        with open(os.path.join(folder, name, "adapter_config.json"), "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # the repository
    write(sys.argv[1])
