"""An image classifier whose activations are zoo::clipped_swish, the custom operator of
//models/common:ops. Seeded weights."""

import torch
from torch import nn

from models.common import ops
from models.common.layers import ConvBNAct, ImageHead


class ClippedSwish(nn.Module):
    def __init__(self, limit=4.0):
        super().__init__()
        self.limit = limit

    def forward(self, x):
        return ops.clipped_swish(x, self.limit)


class SwishNet(nn.Module):
    def __init__(self, num_classes=10, channels=16):
        super().__init__()
        self.features = nn.Sequential(
            ConvBNAct(3, channels, 3, 2, act=False),
            ClippedSwish(),
            ConvBNAct(channels, channels, 3, 2, groups=channels, act=False),  # depthwise
            ClippedSwish(),
        )
        self.head = ImageHead(channels, num_classes)

    def forward(self, x):
        return self.head(self.features(x))


def swish_net(num_classes=10):
    """The network in eval mode; torch's default initialisation under the exporter's seed."""
    torch.manual_seed(0)
    return SwishNet(num_classes=num_classes).eval()
