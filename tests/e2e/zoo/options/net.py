"""A net whose graph every export option changes: linear (kept or decomposed), gelu, an
in-place op and, in SwishNet, a custom op."""

import torch

from zoo.options import ops  # noqa: F401  (registers torch.ops.zoo_options.swish)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(8, 16)
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        hidden = torch.nn.functional.gelu(self.body(x))
        return self.head(hidden.relu_())


class SwishNet(Net):
    def forward(self, x):
        return self.head(torch.ops.zoo_options.swish(self.body(x)))
