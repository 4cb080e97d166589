"""zoo_options::swish, a custom op with an ATen decomposition, for the export-option rows."""

import torch
from torch._decomp import register_decomposition


@torch.library.custom_op("zoo_options::swish", mutates_args=())
def swish(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(x)


@swish.register_fake
def _(x):
    return torch.empty_like(x)


@register_decomposition(torch.ops.zoo_options.swish.default)
def _swish_in_aten(x):
    return x * torch.sigmoid(x)
