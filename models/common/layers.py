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


def estimate_batch_norm(module, input_shape, batches=4, seed=2):
    """Sets every BatchNorm's running statistics from seeded noise, as training would from data.

    With torch's initial statistics (mean 0, variance 1), a deep random network loses its signal
    layer by layer, and every input gives nearly the same logits, so a quantized program would
    be judged on a constant. Estimated statistics keep each layer's activations at unit scale.
    """
    generator = torch.Generator().manual_seed(seed)
    norms = [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # a cumulative average over the batches
    module.train()
    with torch.no_grad():
        for _ in range(batches):
            module(torch.randn(input_shape, generator=generator))
    for norm in norms:
        norm.momentum = 0.1
    return module.eval()

