"""One decoder step with a static KV cache in two buffers: the smallest stateful program.

forward(x, pos) writes this token's key and value at `pos` with index_copy_, then attends over
every cached position up to `pos`. The cache persists between calls, in eager mode and in the
.pte alike.
"""

import torch
from torch import nn


class KVStep(nn.Module):
    def __init__(self, dim=64, max_len=16):
        super().__init__()
        self.max_len = max_len
        self.scale = dim ** -0.5
        self.q, self.k, self.v, self.out = (nn.Linear(dim, dim) for _ in range(4))
        self.register_buffer("k_cache", torch.zeros(1, max_len, dim))
        self.register_buffer("v_cache", torch.zeros(1, max_len, dim))

    def forward(self, x, pos):
        self.k_cache.index_copy_(1, pos, self.k(x))
        self.v_cache.index_copy_(1, pos, self.v(x))
        visible = torch.arange(self.max_len) <= pos
        scores = (self.q(x) @ self.k_cache.transpose(1, 2)) * self.scale
        attention = scores.masked_fill(~visible, float("-inf")).softmax(-1)
        return self.out(attention @ self.v_cache)


def kv_step(dim=64, max_len=16):
    """The step in eval mode, with torch's default initialisation under a fixed seed."""
    torch.manual_seed(0)
    return KVStep(dim, max_len).eval()
