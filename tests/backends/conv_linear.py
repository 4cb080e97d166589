"""The model of the backends' tests: a convolution and a linear layer, as measured in NOTES.md."""

import torch
from torch import nn


class ConvLinear(nn.Module):
    """relu(conv(x)), flattened, through a linear layer: 10 logits per 3x8x8 image."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 8 * 8, 10)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


def conv_linear():
    torch.manual_seed(0)
    return ConvLinear().eval()
