"""A language model small enough for the e2e zoo, with the forward ExecuTorch's LLM runner calls:
each token's embedding goes into a cache at its position, and each token's logits read the mean
of the cache up to its own position."""

import torch


class Lm(torch.nn.Module):
    def __init__(self, vocab=96, width=16, context=16):
        super().__init__()
        self.context = context
        self.embed = torch.nn.Embedding(vocab, width)
        self.head = torch.nn.Linear(width, vocab)
        self.register_buffer("cache", torch.zeros(context, width))

    def forward(self, tokens, input_pos):
        self.cache.index_copy_(0, input_pos, self.embed(tokens[0]))
        seen = (torch.arange(self.context) <= input_pos.unsqueeze(1)).float()  # [seq, context]
        return self.head(seen @ self.cache / seen.sum(1, keepdim=True)).unsqueeze(0)


def lm():
    torch.manual_seed(3)
    return Lm().eval()
