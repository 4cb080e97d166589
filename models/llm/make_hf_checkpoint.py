"""Writes the zoo's small checkpoint folder, models/llm/hf_checkpoint/, the way a team's weights
arrive: a seeded one-layer Llama saved with transformers' save_pretrained (config.json,
generation_config.json, model.safetensors). Deterministic; //models/llm:hf_checkpoint_test
checks that the folder is this script's output.

    python models/llm/make_hf_checkpoint.py models/llm/hf_checkpoint
"""

import sys


def write(folder):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(7)
    config = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                         bos_token_id=0, eos_token_id=1, pad_token_id=1)
    LlamaForCausalLM(config).save_pretrained(folder)


if __name__ == "__main__":
    write(sys.argv[1])
