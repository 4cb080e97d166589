"""A custom operator, tutorial::scaled_sin, with the fake kernel torch.export traces through."""

import torch


@torch.library.custom_op("tutorial::scaled_sin", mutates_args=())
def scaled_sin(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.sin(x) * scale


@scaled_sin.register_fake
def _(x, scale):
    return torch.empty_like(x)
