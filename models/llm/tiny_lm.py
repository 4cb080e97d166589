"""A tiny decoder-only language model whose attention keys and values live in buffers.

forward(tokens, start) embeds `tokens` ([1, T] ids) at positions start .. start+T-1, writes
their keys and values into each block's cache at those positions, and returns the logits
([1, T, vocab]). Exported twice, it serves both phases of generation over one cache:
prefill (the prompt, T dynamic) and decode (one token at a time).
"""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim, heads, max_len):
        super().__init__()
        self.heads, self.head_dim, self.max_len = heads, dim // heads, max_len
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.register_buffer("k_cache", torch.zeros(1, heads, max_len, self.head_dim))
        self.register_buffer("v_cache", torch.zeros(1, heads, max_len, self.head_dim))

    def forward(self, x, positions):
        t = x.shape[1]
        q, k, v = self.qkv(self.norm1(x)).split(x.shape[-1], dim=-1)
        q, k, v = (z.view(1, t, self.heads, self.head_dim).transpose(1, 2) for z in (q, k, v))
        self.k_cache.index_copy_(2, positions, k)
        self.v_cache.index_copy_(2, positions, v)
        # Token i sees every cached position up to its own: the earlier calls' and this one's.
        visible = torch.arange(self.max_len).unsqueeze(0) <= positions.unsqueeze(1)
        scores = (q @ self.k_cache.transpose(2, 3)) * self.head_dim ** -0.5
        attended = scores.masked_fill(~visible, float("-inf")).softmax(-1) @ self.v_cache
        x = x + self.out(attended.transpose(1, 2).reshape(1, t, -1))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab, dim, heads, layers, max_len):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.position = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, max_len) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens, start):
        positions = start + torch.arange(tokens.shape[1])
        x = self.embed(tokens) + self.position(positions)
        for block in self.blocks:
            x = block(x, positions)
        return self.head(self.norm(x))


def tiny_lm(vocab=96, dim=64, heads=4, layers=2, max_len=32):
    """The model in eval mode, with torch's default initialisation under a fixed seed."""
    torch.manual_seed(0)
    return TinyLM(vocab, dim, heads, layers, max_len).eval()


def generate(prefill, decode, prompt, count):
    """Greedy decoding: the ids of the `count` tokens that follow `prompt` (a list of ids).

    prefill and decode are called as (tokens [1, T], start [1]) -> logits [1, T, vocab]: the
    eager model for both, or a program's two methods as an app calls them.
    """
    logits = prefill(torch.tensor([prompt]), torch.tensor([0]))
    tokens = [int(logits[0, -1].argmax())]
    for position in range(len(prompt), len(prompt) + count - 1):
        logits = decode(torch.tensor([[tokens[-1]]]), torch.tensor([position]))
        tokens.append(int(logits[0, -1].argmax()))
    return tokens
