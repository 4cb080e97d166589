"""Models that torch.export or ExecuTorch refuse, each beside the change its error message
suggests, for exporter/actions/fixes_test.py. Each pair differs only by that change (the
failing halves of some pairs live in stateful_models.py, spec_models.py and examples/tutorial)."""

import dataclasses

import torch
from torch._higher_order_ops.while_loop import while_loop

from exporter.tests.stateful_models import AliasedBuffer, ResizedBuffer


class Spectrum(torch.nn.Module):
    """|rfft(x)|: a complex tensor between two operators, which ExecuTorch cannot hold."""

    def forward(self, x):
        return torch.fft.rfft(x).abs()


class RealSpectrum(torch.nn.Module):
    """|rfft(x)| from real tensors only: the real and imaginary parts as two matmuls."""

    def __init__(self, n=8):
        super().__init__()
        k = torch.arange(n // 2 + 1, dtype=torch.float32)
        t = torch.arange(n, dtype=torch.float32)
        angle = 2 * torch.pi * t[:, None] * k[None, :] / n
        self.register_buffer("cos", torch.cos(angle))
        self.register_buffer("sin", -torch.sin(angle))

    def forward(self, x):
        return torch.sqrt((x @ self.cos) ** 2 + (x @ self.sin) ** 2)


class _Cache:
    """A cache kept in a plain object, as Hugging Face's StaticCache keeps its tensors."""

    def __init__(self):
        self.keys = torch.zeros(4, 8)


class AttributeCache(torch.nn.Module):
    """Writes in place to a tensor it reaches through a plain object: non-strict export sees a
    constant there (registered as buffer k_cache too, which only strict export notices)."""

    def __init__(self):
        super().__init__()
        self.cache = _Cache()
        self.register_buffer("k_cache", self.cache.keys, persistent=False)

    def forward(self, x, pos):
        self.cache.keys.index_copy_(0, pos, x)
        return self.cache.keys.sum(0)


class BufferCache(AttributeCache):
    """AttributeCache writing to its registered buffer itself."""

    def forward(self, x, pos):
        self.k_cache.index_copy_(0, pos, x)
        return self.k_cache.sum(0)


class Doubling(torch.nn.Module):
    """Doubles x while its sum is under a limit: a loop whose trip count depends on the data."""

    def forward(self, x, limit):
        def cond_fn(t):
            return t.sum() < limit

        def body_fn(t):
            return (t * 2,)

        return while_loop(cond_fn, body_fn, (x,))


class UnrolledDoubling(torch.nn.Module):
    """Doubling unrolled to a bounded number of steps, each one a torch.where."""

    def forward(self, x, limit):
        for _ in range(8):
            x = torch.where(x.sum() < limit, x * 2, x)
        return (x,)


class MaskedMean(torch.nn.Module):
    """The mean over the rows a mask keeps: its unsqueeze has two dynamic sizes, and XNNPACK
    reshapes with one only."""

    def forward(self, x, mask):
        weights = mask.to(x.dtype).unsqueeze(-1)
        return (x * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)


@torch.library.custom_op("failing_models::scaled_tanh", mutates_args=())
def scaled_tanh(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x) * 2


@scaled_tanh.register_fake
def _(x):
    return torch.empty_like(x)


@torch._decomp.register_decomposition(torch.ops.failing_models.scaled_tanh.default)
def _scaled_tanh_in_aten(x):
    return torch.tanh(x) * 2


class CallsCustomOp(torch.nn.Module):
    """Calls a Python custom op, which ExecuTorch has no kernel for (its decomposition is ATen)."""

    def forward(self, x):
        return torch.ops.failing_models.scaled_tanh(x) + 1


class FinalSizeBuffer(ResizedBuffer):
    """stateful_models.ResizedBuffer with the buffer at its final size, written into."""

    def forward(self, x):
        self.history.copy_(x)
        return self.history + 1


class SeparateBuffer(AliasedBuffer):
    """stateful_models.AliasedBuffer with the mutated buffer a tensor of its own."""

    def __init__(self):
        super().__init__()
        self.register_buffer("row", self.whole[0].clone())


class Scale(torch.nn.Module):
    """x * 2 for any number of rows."""

    def forward(self, x):
        return x * 2


class CondBranch(torch.nn.Module):
    """examples/tutorial's UncheckedBranch with the branch as torch.cond."""

    def forward(self, x, y):
        return torch.cond(x > 2, lambda t: t.sin(), lambda t: t.cos(), (y,))


@dataclasses.dataclass
class Boxes:
    """A forward's output class that no one registered with torch's pytree."""

    corners: torch.Tensor


@dataclasses.dataclass
class RegisteredBoxes:
    corners: torch.Tensor


torch.export.register_dataclass(RegisteredBoxes, serialized_type_name="exporter.tests.failing_models.RegisteredBoxes")


class ReturnsBoxes(torch.nn.Module):
    """Returns an unregistered dataclass, which torch.export cannot trace."""

    def forward(self, x):
        return Boxes(x * 2)


class ReturnsRegisteredBoxes(torch.nn.Module):
    """ReturnsBoxes with its output class registered."""

    def forward(self, x):
        return RegisteredBoxes(x * 2)
