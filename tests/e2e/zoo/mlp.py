"""An MLP whose constants come from Python's random and numpy, seeded by the exporter."""

import random

import numpy
import torch

from zoo.common.layers import head


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(8, 16)
        self.head = head(16, 4)
        self.scale = random.random()
        self.register_buffer("shift", torch.from_numpy(numpy.random.rand(16).astype("float32")))

    def forward(self, x):
        hidden = torch.tanh(self.body(x)) * self.scale + self.shift
        return self.head(hidden)
