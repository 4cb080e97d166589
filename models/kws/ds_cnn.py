"""A keyword-spotting CNN of MLPerf Tiny's size: DS-CNN (Zhang et al., 2017, "Hello Edge"), the
small variant, on 49 frames of 10 MFCC features. Seeded weights, batch-norm statistics from
seeded noise (so that its logits depend on its input), and seeded calibration features."""

import torch
from torch import nn

from models.common import layers

FRAMES, FEATURES = 49, 10


def _conv_bn_relu(in_channels, out_channels, kernel, stride=1, padding=0, groups=1):
    return [
        nn.Conv2d(in_channels, out_channels, kernel, stride, padding, groups=groups, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(),
    ]


class DSCNN(nn.Module):
    """A 10x4 convolution with stride 2, then depthwise-separable blocks, average pooling, a classifier."""

    def __init__(self, num_classes=12, channels=64, blocks=4):
        super().__init__()
        body = _conv_bn_relu(1, channels, (10, 4), stride=2, padding=(5, 1))
        for _ in range(blocks):
            body += _conv_bn_relu(channels, channels, 3, padding=1, groups=channels)  # depthwise
            body += _conv_bn_relu(channels, channels, 1)  # pointwise
        self.features = nn.Sequential(*body)
        self.classifier = nn.Linear(channels, num_classes)

    def forward(self, x):
        pooled = self.features(x).mean(dim=(2, 3), keepdim=True)
        return self.classifier(torch.flatten(pooled, 1))


def ds_cnn(num_classes=12):
    """The network in eval mode, for inputs [batch, 1, 49, 10]."""
    torch.manual_seed(0)
    model = DSCNN(num_classes=num_classes)
    layers.estimate_batch_norm(model, (8, 1, FRAMES, FEATURES))
    return model.eval()


def features(count=8, batch=1, seed=1):
    """`count` batches of seeded normal noise shaped like MFCC frames: {"x": float32[batch, 1, 49, 10]}.

    Drawn in float64 and rounded, as models.common.calibration.images says why.
    """
    generator = torch.Generator().manual_seed(seed)
    return [{"x": torch.randn(batch, 1, FRAMES, FEATURES, generator=generator, dtype=torch.float64).float()}
            for _ in range(count)]
