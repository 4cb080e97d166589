"""The tutorial's id(x) example: plain Python that strict export (TorchDynamo) cannot trace."""

import torch


class UsesId(torch.nn.Module):
    def forward(self, x):
        x = x + 1
        # Non-strict export runs this line as ordinary Python (id(x) > 0 is True); TorchDynamo
        # cannot compare the id of a tensor it created and reports a graph break.
        return x + (id(x) > 0)
