"""Values read from tensors (.item()): torch._check tells export what the model relies on."""

import torch


class CheckedItem(torch.nn.Module):
    """n = x.item() becomes a graph symbol; the checks bound it so that y[:n] is valid."""

    def forward(self, x, y):
        n = x.item()
        torch._check(n >= 0)
        torch._check(n <= y.shape[0])
        return y[:n] * 2, torch.zeros(n, 3)


class UncheckedBranch(torch.nn.Module):
    """The tutorial's failing case: a Python branch on .item() with nothing to decide it."""

    def forward(self, x, y):
        n = x.item()
        if n > 2:
            return y.sin()
        return y.cos()
