"""torch.cond, map and while_loop: data-dependent control flow that export keeps in the graph."""

import torch
from torch._higher_order_ops.map import map as torch_map
from torch._higher_order_ops.while_loop import while_loop


class CondModel(torch.nn.Module):
    """The tutorial's bad1 fixed with torch.cond: the branch depends on the data."""

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: torch.sin(t), lambda t: torch.cos(t), (x,))


class ShapeCond(torch.nn.Module):
    """A branch on a dynamic size: export keeps both branches for any batch."""

    def forward(self, x):
        return torch.cond(x.shape[0] > 4, lambda t: t.sum(0, keepdim=True), lambda t: t[:1] * 2, (x,))


class MapModel(torch.nn.Module):
    """map applies a function (here a cond) to every row of xs."""

    def forward(self, xs, bias):
        def row(x, b):
            return torch.cond(x.sum() > 0, lambda t, c: t + c, lambda t, c: t - c, (x, b))

        return torch_map(row, xs, bias)


class WhileModel(torch.nn.Module):
    """Doubles x until its sum passes a limit: the trip count depends on the data."""

    def forward(self, x, limit):
        def cond_fn(i, t):
            return t.sum() < limit

        def body_fn(i, t):
            return i + 1, t * 2

        return while_loop(cond_fn, body_fn, (torch.zeros((), dtype=torch.int64), x))
