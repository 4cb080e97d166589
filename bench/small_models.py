"""Generates a package of N small models for the benchmark: one file and one chain each."""

MODEL = '''"""Small benchmark model {index}."""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, {width}, 3, padding=1)
        self.hidden = nn.Linear({width}, {width})
        self.head = nn.Linear({width}, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x)).mean((2, 3))
        x = torch.relu(self.hidden(x))
        return self.head(x)
'''

BUILD_HEADER = '''load("//rules:defs.bzl", "dim", "executorch_program", "shape_spec", "tensor", "torch_export", "torch_model")

shape_spec(
    name = "images",
    inputs = {"x": tensor(["batch", 3, 16, 16])},
    dims = {"batch": dim(min = 1, max = 8)},
)
'''

BUILD_MODEL = '''
torch_model(name = "m{index}", srcs = ["__init__.py", "m{index}.py"], entry = "bench_small.m{index}:Net")

torch_export(name = "m{index}_ep", model = ":m{index}", shapes = ":images")

executorch_program(name = "m{index}_pte", exported = ":m{index}_ep")
'''

# The edit that row (d) makes: a real change to the first model's forward.
FORWARD_EDIT = ("return self.head(x)", "return self.head(x) * 0.5")


def write_package(workspace, count):
    """Writes //bench_small with `count` models; returns their executorch_program labels."""
    workspace.write("bench_small/__init__.py", "")
    build = [BUILD_HEADER]
    for index in range(count):
        workspace.write(f"bench_small/m{index}.py", MODEL.format(index=index, width=8 + index))
        build.append(BUILD_MODEL.format(index=index))
    workspace.write("bench_small/BUILD", "".join(build))
    return [f"//bench_small:m{index}_pte" for index in range(count)]
