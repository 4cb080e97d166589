"""Named dims shared by inputs, and sizes derived from them ("2*dx", "dx+1")."""

import torch


class Interleave(torch.nn.Module):
    """x is [dx, dh]; y is [2*dx, dh]; z is [dx+1]: every size follows from dx and dh."""

    def forward(self, x, y, z):
        evens = y[::2]
        return (x + evens) * z[1:].unsqueeze(1)


class Named(torch.nn.Module):
    """The tutorial's Named case: x is [dx, 3], y is [2*dx, dh]."""

    def forward(self, x, y):
        return torch.cat([x, x], 0).sum(1) + y.sum(1)


class Unrelated(torch.nn.Module):
    """The tutorial's failing case: x + y[1:] needs len(y) == len(x) + 1."""

    def forward(self, x, y):
        return x + y[1:]


class Bounded(torch.nn.Module):
    """Works only up to 512 rows, so a dim allowed to reach 1024 conflicts with it."""

    def forward(self, x):
        if x.shape[0] > 512:
            return x.sum(0)
        return x * 2
