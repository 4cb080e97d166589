"""Prompts whose text ends at the model's end id within MAX_NEW_TOKENS tokens: the eos_prompts of the
generation tests here. Written by find_eos_prompts.py; do not edit."""

MAX_NEW_TOKENS = 8

EOS_PROMPTS = {
    "gemma3": "bytes",
    "gpt2": "model",
    "llama": "model",
    "phi3": "input",
    "qwen3": "until",
    "qwen3_folder": "exports",
    "smollm3": "shapes",
}
