"""The text-generation rows of the architectures table (architectures.bzl): name -> a tiny seeded
config of a causal LM for ExecuTorch's LLM runner, which runs with the zoo's 96-token tokenizer:
each config names its <|bos|> (0) and <|eos|> (1), as a model's config names its tokenizer's.
The file holds dict literals and dict() only, so that find_eos_prompts.py reads it in Python too."""

_DECODER = {"bos_token_id": 0, "eos_token_id": 1, "hidden_size": 32, "intermediate_size": 64, "max_position_embeddings": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, "pad_token_id": 0, "vocab_size": 100}

# Phi-3's and SmolLM3's weights are drawn wider than transformers' default (0.3 and 0.2, against
# 0.02): at 0.02 neither ends a text (generates <|eos|>) from any prompt of the zoo's corpus, and
# then no generation test could show that the runner stops where transformers stops. (At 0.2,
# Phi-3 generates id 99 from "The runner reads the cache", which the tokenizer lacks.)
DECODERS = {
    "gpt2": {"bos_token_id": 0, "eos_token_id": 1, "model_type": "gpt2", "n_embd": 32, "n_head": 2, "n_layer": 2, "n_positions": 64, "vocab_size": 100},
    "llama": dict(_DECODER, head_dim = 8, model_type = "llama"),
    "qwen3": dict(_DECODER, head_dim = 8, model_type = "qwen3"),
    "gemma3": dict(_DECODER, head_dim = 8, model_type = "gemma3_text", query_pre_attn_scalar = 8, sliding_window = 8),
    "phi3": dict(_DECODER, initializer_range = 0.3, model_type = "phi3", original_max_position_embeddings = 64),
    "smollm3": dict(_DECODER, initializer_range = 0.2, model_type = "smollm3"),
}
