"""Building blocks shared by the zoo's image and sequence models."""

import torch
from torch import nn


class ConvBNAct(nn.Sequential):
    """Convolution, batch norm and ReLU6; groups = channels makes it depthwise."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, groups=1, act=True):
        super().__init__(
            nn.Conv2d(in_channels, out_channels, kernel_size, stride, kernel_size // 2,
                      groups=groups, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU6() if act else nn.Identity(),
        )


class ImageHead(nn.Module):
    """Global average pooling, then a linear classifier."""

    def __init__(self, channels, num_classes, keepdim=False):
        super().__init__()
        self.fc = nn.Linear(channels, num_classes)
        # XNNPACK delegates a mean only as 4-D global pooling (keepdim); the quantized zoo
        # needs that to leave no kernel outside the delegate.
        self.keepdim = keepdim

    def forward(self, x):
        if self.keepdim:
            return self.fc(torch.flatten(x.mean(dim=(2, 3), keepdim=True), 1))
        return self.fc(x.mean(dim=(2, 3)))


class FeedForward(nn.Sequential):
    """The two-layer MLP of a transformer block."""

    def __init__(self, width, hidden):
        super().__init__(nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, width))


def masked_mean(x, mask):
    """Mean over the sequence axis of x [batch, seq, width], counting only mask [batch, seq].

    A row whose mask is all False gives zeros rather than NaN.
    """
    weights = mask.to(x.dtype).unsqueeze(-1)
    total = (x * weights).sum(dim=1)
    return total / weights.sum(dim=1).clamp(min=1.0)


def estimate_batch_norm(module, input_shape, batches=4, seed=2, dtype=torch.float64):
    """Sets every BatchNorm's running statistics from seeded noise, as training would from data.

    With torch's initial statistics (mean 0, variance 1), a deep random network loses its signal
    layer by layer, and every input gives nearly the same logits, so a quantized program would
    be judged on a constant. Estimated statistics keep each layer's activations at unit scale.

    The statistics are weights of the program, so they must come out bit for bit the same on
    every machine: the noise is drawn and the network run in float64, and the statistics are
    rounded to float32 once at the end. In float32, the CPU's kernels (MKL's GEMM code path
    differs between Intel and AMD) would decide their last bits (docs/caching.md); dtype =
    torch.float32 shows that (//exporter/core:determinism_test's control).
    """
    generator = torch.Generator().manual_seed(seed)
    norms = [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # a cumulative average over the batches
    module.to(dtype).train()  # float32 -> float64 -> float32 gives the weights back exactly
    with torch.no_grad():
        for _ in range(batches):
            module(torch.randn(input_shape, generator=generator, dtype=torch.float64).to(dtype))
    for norm in norms:
        norm.momentum = 0.1
        _settle_mean(norm)
    return module.float().eval()


def _settle_mean(norm):
    """Snaps each channel's running mean to a grid of 2**-24 of the channel's standard deviation.

    A mean that is zero in exact arithmetic (a bias-free convolution of the zero-mean output of
    a batch norm) comes out as rounding noise, about 1e-17, whose bits follow the kernels' order
    of summation even in float64, and float32 would keep that noise. On the grid it is 0, and a
    real mean moves by less than float32 would resolve against the channel's scale. The grid's
    step is a power of two taken from the exponent, exact on every machine; adding 0.0 turns a
    rounded -0.0 into 0.0, so the sign of the noise does not reach the bytes either.
    """
    _, exponent = torch.frexp(norm.running_var.sqrt())
    step = torch.ldexp(torch.ones_like(norm.running_var), exponent - 25)
    norm.running_mean.copy_(torch.round(norm.running_mean / step) * step + 0.0)

