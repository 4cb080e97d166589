"""Models with mutable buffers, for exporter/tests/test_buffers.py."""

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


def counter():
    torch.manual_seed(0)
    return Counter().eval()
