"""A volumetric (3D) classifier for clips of 8 frames of 16x16 pixels: a convolution of each
frame, 3D average pooling over frames and pixels, and a linear head. Seeded weights.

The convolution is 2D, frame by frame: XNNPACK takes no 3D convolution, and the portable
library's convolution kernel refuses 5-D inputs when it runs (its kernel check passes: it is
registered for the operator and dtype, not for the rank). A Conv3d here built a program that
no ExecuTorch runtime could run (measured in the native runtime, ExecuTorch 1.5.1).

ExecuTorch's portable library (1.4.1, 1.5.1) has no kernel for aten::avg_pool3d.out and XNNPACK does not
take 3D pooling, so the program builds but would not load with the portable kernels alone: the
kernel coverage check catches it (docs/deployment.md, "Kernel coverage")."""

import torch
from torch import nn


class VolumeNet(nn.Module):
    def __init__(self, classes=5, channels=8):
        super().__init__()
        self.frame_conv = nn.Conv2d(1, channels, 3, padding=1)
        self.pool = nn.AvgPool3d(2)
        self.head = nn.Linear(channels * 4 * 8 * 8, classes)

    def forward(self, x):
        batch, _, frames, height, width = x.shape
        y = self.frame_conv(x.transpose(1, 2).reshape(batch * frames, 1, height, width))
        y = y.reshape(batch, frames, -1, height, width).transpose(1, 2)
        return self.head(self.pool(torch.relu(y)).flatten(1))


def volume_net(classes=5):
    torch.manual_seed(0)
    return VolumeNet(classes=classes).eval()
