"""A small transformer encoder classifier: token and position embeddings, pre-norm blocks with
multi-head self-attention under a padding mask, masked mean pooling. Seeded weights.

The sequence length is dynamic (up to max_len) and the attention mask is an input."""

import math

import torch
from torch import nn

from models.common.layers import FeedForward, masked_mean

# Added to the scores of padded keys. Finite, so that a row with no real token stays finite.
MASKED_SCORE = -1e4


class SelfAttention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads, self.head_width = heads, width // heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x, mask):
        batch, seq, width = x.shape
        q, k, v = self.qkv(x).view(batch, seq, 3, self.heads, self.head_width).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_width)
        # mask [batch, seq] -> [batch, 1, 1, seq]: every query ignores padded keys.
        scores = scores + (~mask)[:, None, None, :].to(scores.dtype) * MASKED_SCORE
        context = torch.softmax(scores, dim=-1) @ v
        return self.out(context.transpose(1, 2).reshape(batch, seq, width))


class EncoderBlock(nn.Module):
    def __init__(self, width, heads, hidden):
        super().__init__()
        self.norm1, self.attention = nn.LayerNorm(width), SelfAttention(width, heads)
        self.norm2, self.feed_forward = nn.LayerNorm(width), FeedForward(width, hidden)

    def forward(self, x, mask):
        x = x + self.attention(self.norm1(x), mask)
        return x + self.feed_forward(self.norm2(x))


class TransformerEncoder(nn.Module):
    def __init__(self, vocab=64, width=32, heads=4, hidden=64, layers=2, max_len=64, num_classes=4):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Parameter(torch.randn(max_len, width) * 0.02)
        self.blocks = nn.ModuleList(EncoderBlock(width, heads, hidden) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.classifier = nn.Linear(width, num_classes)

    def forward(self, input_ids, attention_mask):
        seq = input_ids.shape[1]
        x = self.tokens(input_ids) + self.positions[:seq]
        for block in self.blocks:
            x = block(x, attention_mask)
        return self.classifier(masked_mean(self.norm(x), attention_mask))


def transformer_encoder(num_classes=4, max_len=64):
    """The encoder in eval mode; torch's default initialisation under the exporter's seed."""
    torch.manual_seed(0)
    return TransformerEncoder(num_classes=num_classes, max_len=max_len).eval()
