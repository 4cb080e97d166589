"""A MobileNetV2-style network (Sandler et al., 2018): inverted residuals with depthwise
convolutions, narrowed so that it exports and lowers in seconds. Seeded weights."""

import torch
from torch import nn

from models.common import layers
from models.common.layers import ConvBNAct, ImageHead


class InvertedResidual(nn.Module):
    """1x1 expansion, 3x3 depthwise convolution, linear 1x1 projection; residual when shapes match."""

    def __init__(self, in_channels, out_channels, stride, expand):
        super().__init__()
        hidden = in_channels * expand
        layers = [ConvBNAct(in_channels, hidden, 1)] if expand != 1 else []
        layers += [
            ConvBNAct(hidden, hidden, 3, stride, groups=hidden),  # depthwise
            ConvBNAct(hidden, out_channels, 1, act=False),
        ]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and in_channels == out_channels

    def forward(self, x):
        out = self.block(x)
        return x + out if self.residual else out


# (expansion, output channels, blocks, first stride) per stage, as in the paper's table 2 at
# a quarter of its width and with fewer blocks.
STAGES = ((1, 8, 1, 1), (6, 12, 2, 2), (6, 16, 2, 2), (6, 24, 2, 2), (6, 40, 1, 1))


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=10, stem_channels=16, last_channels=160, width=1, keepdim_pool=False):
        super().__init__()
        stem_channels, last_channels = stem_channels * width, last_channels * width
        layers, channels = [ConvBNAct(3, stem_channels, 3, 2)], stem_channels
        for expand, out_channels, blocks, stride in STAGES:
            for index in range(blocks):
                out = out_channels * width
                layers.append(InvertedResidual(channels, out, stride if index == 0 else 1, expand))
                channels = out
        layers.append(ConvBNAct(channels, last_channels, 1))
        self.features = nn.Sequential(*layers)
        self.head = ImageHead(last_channels, num_classes, keepdim=keepdim_pool)

    def forward(self, x):
        return self.head(self.features(x))


def mobilenet_v2(num_classes=10, width=1, keepdim_pool=False, estimate_batch_norm=False):
    """The network in eval mode; torch's default initialisation under the exporter's seed.

    width multiplies every layer's channels; keepdim_pool pools the way XNNPACK delegates;
    estimate_batch_norm takes batch norm statistics from seeded noise (see layers.py).
    """
    torch.manual_seed(0)
    model = MobileNetV2(num_classes=num_classes, width=width, keepdim_pool=keepdim_pool)
    if estimate_batch_norm:
        layers.estimate_batch_norm(model, (8, 3, 64, 64))
    return model.eval()
