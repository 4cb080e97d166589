"""Trains the zoo's tokenizer: a byte-level BPE over tokenizer_corpus.txt with Hugging Face's
`tokenizers` (in the toolchain's lock), 96 entries to match tiny_lm's vocabulary. Only the
corpus's characters enter the alphabet, so every token is printable ASCII. Training is
deterministic; //models/llm:tokenizer_test checks that tokenizer.json is this script's output.

    python models/llm/train_tokenizer.py models/llm/tokenizer_corpus.txt models/llm/tokenizer.json
"""

import sys

VOCAB_SIZE = 96
SPECIAL_TOKENS = ["<|bos|>", "<|eos|>"]  # ids 0 and 1


def train(corpus, out):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIAL_TOKENS, show_progress=False)
    tokenizer.train([corpus], trainer)
    tokenizer.save(out)


if __name__ == "__main__":
    train(*sys.argv[1:3])
