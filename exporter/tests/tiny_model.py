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
