"""A tiny vision-language model in the three parts ExecuTorch's MultimodalRunner calls.

    vision_encoder   image [1, 3, H, W] float (pixels in 0..1) -> embeddings [1, n, dim]: one
                     embedding per patch, n = (H / patch) * (W / patch)
    token_embedding  tokens [1, seq] int64 -> embeddings [1, seq, dim]
    text_decoder     embeddings [1, seq, dim], input_pos [seq] int64 -> logits [1, seq, vocab],
                     its KV cache in buffers (tiny_lm's blocks), so an image's embeddings, the
                     prompt's and each new token's share one cache

The runner's argument names select the part (TinyVLM.forward), so one torch_model serves the
three methods.
"""

import torch
from torch import nn

from models.llm.tiny_lm import Block


class VisionEncoder(nn.Module):
    """Patches of the normalised image, projected to the decoder's width (LLaVA's shape, tiny)."""

    def __init__(self, dim, patch, channels, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean).view(1, channels, 1, 1))
        self.register_buffer("std", torch.tensor(std).view(1, channels, 1, 1))
        self.patches = nn.Conv2d(channels, dim, kernel_size=patch, stride=patch)
        # The norm gives image embeddings the scale of token embeddings (about 1), so that the
        # image, not only the prompt, decides the tokens of a model with random weights.
        self.project = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim), nn.LayerNorm(dim))

    def forward(self, image):
        x = self.patches((image - self.mean) / self.std)
        return self.project(x.flatten(2).transpose(1, 2))


class TextDecoder(nn.Module):
    """tiny_lm's decoder over embeddings instead of ids. The runner's positions are consecutive,
    so the first is where the call starts (as models/llm/runner_lm.py reads them)."""

    def __init__(self, vocab, dim, heads, layers, max_len):
        super().__init__()
        self.position = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, max_len) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, embeddings, input_pos):
        positions = input_pos[:1] + torch.arange(embeddings.shape[1])
        x = embeddings + self.position(positions)
        for block in self.blocks:
            x = block(x, positions)
        return self.head(self.norm(x))


class TinyVLM(nn.Module):
    """The three parts behind one forward that calls the part its arguments name, as the runner
    calls the method an input's kind names. Exported once per method, each program holds only
    the weights of its part (ExecuTorch drops the parameters a graph does not use); eager, one
    module keeps the decoder's cache across the calls of a generation."""

    def __init__(self, vocab, dim, heads, layers, max_len, patch, channels, mean, std):
        super().__init__()
        self.vision = VisionEncoder(dim, patch, channels, mean, std)
        self.embed = nn.Embedding(vocab, dim)
        self.decoder = TextDecoder(vocab, dim, heads, layers, max_len)

    def forward(self, image=None, tokens=None, embeddings=None, input_pos=None):
        if image is not None:
            return self.vision(image)
        if tokens is not None:
            return self.embed(tokens)
        return self.decoder(embeddings, input_pos)


def tiny_vlm(vocab=96, dim=64, heads=4, layers=2, max_len=48, patch=8, channels=3,
             mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25)):
    """The model in eval mode, torch's default initialisation under a fixed seed."""
    torch.manual_seed(0)
    return TinyVLM(vocab, dim, heads, layers, max_len, patch, channels, mean, std).eval()
