"""A volumetric (3D) classifier: a 3D convolution, 3D average pooling and a linear head, for
clips of 8 frames of 16x16 pixels. Seeded weights.

ExecuTorch's portable library (1.4.1, 1.5.1) has no kernel for aten::avg_pool3d.out and XNNPACK does not
take 3D pooling, so the program builds but would not load with the portable kernels alone: the
kernel coverage check catches it (docs/deployment.md, "Kernel coverage")."""

import torch
from torch import nn


class VolumeNet(nn.Module):
    def __init__(self, classes=5, channels=8):
        super().__init__()
        self.conv = nn.Conv3d(1, channels, 3, padding=1)
        self.pool = nn.AvgPool3d(2)
        self.head = nn.Linear(channels * 4 * 8 * 8, classes)

    def forward(self, x):
        return self.head(self.pool(torch.relu(self.conv(x))).flatten(1))


def volume_net(classes=5):
    torch.manual_seed(0)
    return VolumeNet(classes=classes).eval()
