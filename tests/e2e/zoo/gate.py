"""Branches created in set order: their order, and so the weights each gets, follows the
string hash. It exports the same bytes only because the exporter pins PYTHONHASHSEED."""

import torch

BRANCHES = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.branches = torch.nn.ModuleDict()
        for name in BRANCHES:
            self.branches[name] = torch.nn.Linear(8, 8)
        self.out = torch.nn.Linear(8, 2)

    def forward(self, x):
        total = x
        for branch in self.branches.values():
            total = total + torch.relu(branch(x))
        return self.out(total)
