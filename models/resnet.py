"""ResNet-18 (He et al., 2015), defined here because torchvision cannot be installed beside the
CPU build of torch. Weights come from torch's default initialisation under a fixed seed."""

import torch
from torch import nn


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with a residual connection."""

    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.shortcut = nn.Identity()
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, blocks_per_stage=(2, 2, 2, 2), num_classes=1000, width=64):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 7, 2, 3, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(),
            nn.MaxPool2d(3, 2, 1),
        )
        stages, channels = [], width
        for index, blocks in enumerate(blocks_per_stage):
            out_channels = width * 2**index
            for block in range(blocks):
                stride = 2 if index > 0 and block == 0 else 1
                stages.append(BasicBlock(channels, out_channels, stride))
                channels = out_channels
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(channels, num_classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def resnet18(num_classes=1000, estimate_batch_norm=False):
    """ResNet-18 with seeded weights, in eval mode.

    estimate_batch_norm: batch norm statistics from seeded noise (models.common.layers), so
    that the outputs depend on the input as a trained network's do; the quantized zoo uses it.
    """
    torch.manual_seed(0)
    model = ResNet((2, 2, 2, 2), num_classes=num_classes)
    if estimate_batch_norm:
        from models.common.layers import estimate_batch_norm as estimate  # only that variant's dep

        estimate(model, (8, 3, 224, 224))
    return model.eval()
