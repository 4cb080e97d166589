"""Writes tests/huggingface/qwen3_folder/ the way a causal LM arrives from the Hub: transformers'
save_pretrained of a seeded Qwen3 (config.json, generation_config.json, model.safetensors), with
its tokenizer.json (the zoo's, a symlink that git keeps). Deterministic; //tests/huggingface:
folder_test checks that the folder is this script's output.

    python tests/huggingface/make_qwen3_folder.py tests/huggingface/qwen3_folder
"""

import sys


def write(folder):
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(5)
    config = Qwen3Config(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, head_dim=8, max_position_embeddings=64, bos_token_id=0,
                         eos_token_id=1, pad_token_id=1)
    Qwen3ForCausalLM(config).save_pretrained(folder)


if __name__ == "__main__":
    write(sys.argv[1])
