"""A model that calls a custom operator from a py_library dep (examples/tutorial/ops)."""

import torch

from examples.tutorial.ops import mysin  # noqa: F401  (registers torch.ops.tutorial.scaled_sin)


class CustomOpModel(torch.nn.Module):
    def forward(self, x):
        return torch.ops.tutorial.scaled_sin(torch.relu(x), 2.0) + 1
