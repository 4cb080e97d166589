"""One small model per row of the lowering matrix (matrix.bzl): each exercises one shape_spec
feature in a way that its .pte must compute like eager at every size the spec allows."""

import torch


class SharedDim(torch.nn.Module):
    """x and y share the dim n."""

    def forward(self, x, y):
        return x * y + x


class PlusOne(torch.nn.Module):
    """y has one row more than x ("d+1")."""

    def forward(self, x, y):
        return x + y[1:]


class Affine(torch.nn.Module):
    """y has 4*d-2 rows: x repeated four times, minus two rows."""

    def forward(self, x, y):
        return torch.cat([x, x, x, x], 0)[2:] * 2 + y


class Linear(torch.nn.Module):
    """A linear layer over rows of any count."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.linear(x))


class RowSums(torch.nn.Module):
    """Works for any shape: hints decide which sizes stay dynamic."""

    def forward(self, x):
        return x.sum(1) * 2


class FixedWidth(torch.nn.Module):
    """Needs 5 columns (a [5, 3] weight), so an AUTO hint on the columns specialises."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(5, 3))

    def forward(self, x):
        return x @ self.weight


class TwoInputs(torch.nn.Module):
    """Two inputs whose sizes are free of each other (a spec-wide hint applies to both)."""

    def forward(self, x, y):
        return x.sum(0) * 3, y.mean(1)


class Keywords(torch.nn.Module):
    """A keyword-only tensor parameter, and an optional one the spec passes by name."""

    def forward(self, x, mask=None, *, scale):
        out = x * scale
        return out if mask is None else out * mask


class Filled(torch.nn.Module):
    """offset is traced with fill = 3; the program takes any value."""

    def forward(self, x, offset):
        return x + offset
