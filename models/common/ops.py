"""zoo::clipped_swish, a custom operator that the zoo's models share.

torch.library.custom_op makes it opaque to torch.export: the .pt2 keeps one
torch.ops.zoo.clipped_swish node. register_fake gives export its output shape. ExecuTorch has
no kernel for it, so the decomposition registered below lets a torch_export spell it in ATen
ops (ir = "inference", decompose = ["zoo.clipped_swish"]) before lowering.
"""

import torch
from torch._decomp import register_decomposition


@torch.library.custom_op("zoo::clipped_swish", mutates_args=())
def clipped_swish(x: torch.Tensor, limit: float) -> torch.Tensor:
    """x * sigmoid(x), clipped to at most `limit`."""
    return torch.clamp(x * torch.sigmoid(x), max=limit)


@clipped_swish.register_fake
def _(x, limit):
    return torch.empty_like(x)


@register_decomposition(torch.ops.zoo.clipped_swish.default)
def _clipped_swish_in_aten(x, limit):
    return torch.clamp(x * torch.sigmoid(x), max=limit)
