"""Small models whose forward signatures exercise every kind of shape_spec input."""

import torch


class Nested(torch.nn.Module):
    """A list, a dict with an int key and a tuple of tensors; all rows share one dim."""

    def forward(self, xs, table, pair):
        a, b = pair
        return xs[0] + xs[1].sum(1, keepdim=True) + table["w"] * table[3] + a - b


class NonTensor(torch.nn.Module):
    """int, float, bool, str and None inputs: export bakes them into the graph."""

    def forward(self, x, repeats: int, scale: float, negate: bool, mode: str, extra=None):
        y = x.repeat(repeats, 1) * scale
        if negate:
            y = -y
        return y.relu() if mode == "relu" else y.tanh()


class Signature(torch.nn.Module):
    """A positional parameter, *args, a keyword-only parameter and **kwargs."""

    def forward(self, x, *rest, bias, **named):
        out = x + bias
        for r in rest:
            out = out * r
        return out + named.get("shift", 0)


class Dtypes(torch.nn.Module):
    """One input per dtype family: floats, ints and a bool mask."""

    def forward(self, f16, f64, i8, u8, i32, i64, mask):
        total = f16.float().sum() + f64.float().sum() + (i8 + u8 + i32 + i64).sum()
        return torch.where(mask, total, -total)


class Matmul(torch.nn.Module):
    def forward(self, x, y):
        return x @ y


class Reshape4(torch.nn.Module):
    """Needs a multiple of 4 rows: torch suggests a derived dim (4*_dx)."""

    def forward(self, x):
        return x.reshape(4, -1)


class Shifted(torch.nn.Module):
    """y must be one longer than x; z's size is written in terms of y's dim."""

    def forward(self, x, y, z):
        return x + y[1:], z * 2


class FourColumns(torch.nn.Module):
    def forward(self, x):
        if x.shape[1] == 4:
            return x + 1
        return x - 1


class Fails(torch.nn.Module):
    """Raises from user code while export traces it."""

    def forward(self, x):
        raise ValueError("this model refuses to be traced")
