"""Generates a package of N small or mid-size models for the benchmark: one file and one chain each."""

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

# Mid-size: a residual CNN (a stem and four blocks of convolutions, batch norms and a residual
# add: 86 nodes in its exported graph, against MODEL's 14), which takes a warm process about 3 s
# to lower, against about 1.3 s for MODEL: the size of the mid-size models issue 36 measured.
MID_MODEL = '''"""Mid-size benchmark model {index}."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(out)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, {width}, 3, padding=1)
        self.blocks = nn.Sequential(*[Block({width}) for _ in range(4)])
        self.head = nn.Linear({width}, 10)

    def forward(self, x):
        x = self.blocks(torch.relu(self.stem(x))).mean((2, 3))
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


def write_package(workspace, count, mid=False):
    """Writes //bench_small with `count` models (with mid, MID_MODEL's); returns their
    executorch_program labels."""
    workspace.write("bench_small/__init__.py", "")
    build = [BUILD_HEADER]
    for index in range(count):
        source = MID_MODEL.format(index=index, width=16 + 2 * index) if mid else MODEL.format(index=index, width=8 + index)
        workspace.write(f"bench_small/m{index}.py", source)
        build.append(BUILD_MODEL.format(index=index))
    workspace.write("bench_small/BUILD", "".join(build))
    return [f"//bench_small:m{index}_pte" for index in range(count)]
