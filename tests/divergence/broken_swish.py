"""A deliberately broken numerics case: the custom op divergence::swish computes x * sigmoid(x)
in eager mode, but the decomposition that the export uses for it computes hardswish, a classic
mix-up. The .pte, lowered from the decomposed export, departs from the eager model at that op."""

import torch
from torch import nn
from torch._decomp import register_decomposition


@torch.library.custom_op("divergence::swish", mutates_args=())
def swish(x: torch.Tensor) -> torch.Tensor:
    """The eager function: x * sigmoid(x)."""
    return x * torch.sigmoid(x)


@swish.register_fake
def _(x):
    return torch.empty_like(x)


@register_decomposition(torch.ops.divergence.swish.default)
def _hardswish_by_mistake(x):
    return x * torch.clamp(x + 3, 0, 6) / 6


class Swish(nn.Module):
    def forward(self, x):
        return swish(x)


class BrokenNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(16, 32)
        self.act = Swish()
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.act(self.stem(x)))


def broken_net():
    torch.manual_seed(0)
    return BrokenNet().eval()
