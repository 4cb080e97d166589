"""Writes tests/huggingface/qwen3_folder/ the way a causal LM arrives from the Hub, as issue 64's
user had it: a byte-level BPE tokenizer trained on SENTENCES (97 tokens, <s> = 0 and </s> = 1),
saved by transformers (tokenizer.json, and tokenizer_config.json naming <s> and </s>), and a
seeded 2-layer Qwen3 saved with save_pretrained (config.json, generation_config.json,
model.safetensors), whose config and generation config say bos 0 and eos 1. ExecuTorch's
tokenizer library, reading tokenizer.json alone, takes <s> for both: only the folder's other
files say where a text ends. Deterministic; //tests/huggingface:folder_test checks that the
folder is this script's output.

    python tests/huggingface/make_qwen3_folder.py tests/huggingface/qwen3_folder
"""

import sys

# What the tokenizer is trained on; find_eos_prompts.py picks the folder's prompts from them too.
SENTENCES = [
    "a runtime loads the program and runs it.",
    "the runner reads the cache and writes the next token.",
    "the build exports the model and lowers the graph.",
    "a phone runs the program the build wrote.",
]


def tokenizer():
    """The folder's tokenizer: 97 entries, <s> and </s> first."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    trained = Tokenizer(models.BPE())
    trained.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trained.decoder = decoders.ByteLevel()
    trained.train_from_iterator(SENTENCES, trainers.BpeTrainer(vocab_size=97, special_tokens=["<s>", "</s>"],
                                                               show_progress=False))
    return trained


def write(folder):
    import torch
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    PreTrainedTokenizerFast(tokenizer_object=tokenizer(), bos_token="<s>", eos_token="</s>").save_pretrained(folder)
    torch.manual_seed(5)
    config = Qwen3Config(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, head_dim=8, max_position_embeddings=64, bos_token_id=0,
                         eos_token_id=1, pad_token_id=1)
    Qwen3ForCausalLM(config).save_pretrained(folder)


if __name__ == "__main__":
    write(sys.argv[1])
