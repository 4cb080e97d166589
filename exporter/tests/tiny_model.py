"""A two-input, two-output model small enough to export and lower in seconds, for tests."""

import torch
from torch import nn


class Tiny(nn.Module):
    """relu(fc(x)) * scale, and y + 1: a float and an int output, a parameter and a buffer."""

    def __init__(self, features=4, classes=3):
        super().__init__()
        self.fc = nn.Linear(features, classes)
        self.register_buffer("scale", torch.full((classes,), 2.0))

    def forward(self, x, y):
        return torch.relu(self.fc(x)) * self.scale, y + 1


def tiny(features=4, classes=3):
    torch.manual_seed(0)
    return Tiny(features, classes).eval()


class ConvNet(nn.Module):
    """A small image network whose weights are nearly all of its XNNPACK .pte: a convolution,
    global pooling and two linear layers (280k weights)."""

    def __init__(self, classes=256):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.hidden = nn.Linear(16, 1024)
        self.head = nn.Linear(1024, classes)

    def forward(self, x):
        features = torch.flatten(self.pool(torch.relu(self.conv(x))), 1)
        return self.head(torch.relu(self.hidden(features)))


def conv_net():
    torch.manual_seed(0)
    return ConvNet().eval()
