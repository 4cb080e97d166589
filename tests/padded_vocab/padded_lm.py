"""A language model whose vocabulary is padded past its tokenizer's, as vocabularies padded to a
multiple of 64 or 128 are: tiny_lm behind the runner's forward, with 128 logits for the 96
tokens of //models/llm:tiny_tokenizer. The padding is not masked, and padding id 100 outweighs
every real token, so greedy generation emits an id the tokenizer does not have."""

import torch

from models.llm.runner_lm import ForRunner
from models.llm.tiny_lm import tiny_lm

PADDING_ID = 100


def padded_lm():
    lm = tiny_lm(vocab=128)
    with torch.no_grad():
        lm.head.bias[PADDING_ID] = 100.0
    return ForRunner(lm).eval()
