"""Models with mutable buffers, for exporter/core/buffers_test.py."""

import torch


class Counter(torch.nn.Module):
    """Adds each input to a running total that starts at 5, not at zero."""

    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.full((1, 4), 5.0))
        self.register_buffer("total_scale", torch.ones(1))  # its name contains "total"
        self.scale = torch.nn.Linear(4, 4)

    def forward(self, x):
        self.total.add_(self.scale(x))
        return self.total * self.total_scale


class AliasedBuffer(torch.nn.Module):
    """Mutates a buffer that is a view of another: torch cannot functionalise it."""

    def __init__(self):
        super().__init__()
        whole = torch.zeros(4, 8)
        self.register_buffer("whole", whole)
        self.register_buffer("row", whole[0])

    def forward(self, x):
        self.row.add_(x)
        return self.whole.sum(0)


class ResizedBuffer(torch.nn.Module):
    """Resizes a buffer: ExecuTorch plans a buffer at one size."""

    def __init__(self):
        super().__init__()
        self.register_buffer("history", torch.zeros(8))

    def forward(self, x):
        self.history.resize_(x.shape[0])
        self.history.copy_(x)
        return self.history + 1


class KVCache(torch.nn.Module):
    """A decoder step's static cache: writes x at `pos` of two buffers with index_copy_."""

    def __init__(self, length=4, width=8):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, length, width))
        self.register_buffer("v_cache", torch.zeros(1, length, width))

    def forward(self, x, pos):
        self.k_cache.index_copy_(1, pos, x)
        self.v_cache.index_copy_(1, pos, x * 2)
        return (self.k_cache + self.v_cache).sum(1)


def counter():
    torch.manual_seed(0)
    return Counter().eval()
