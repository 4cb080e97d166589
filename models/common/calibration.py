"""Calibration batches for the quantized zoo: seeded images, made in the build (no downloads).

The zoo's models have seeded random weights, not trained ones, so images of seeded noise
exercise them as well as photographs would. A seed other than the numerics tests' (0) keeps
the calibration batches apart from the inputs that the quantized programs are judged on.
"""

import torch


def images(count=16, batch=4, channels=3, size=64, seed=1):
    """`count` batches of `batch` normal-noise images, {"x": float32[batch, channels, size, size]}."""
    generator = torch.Generator().manual_seed(seed)
    return [{"x": torch.randn(batch, channels, size, size, generator=generator)} for _ in range(count)]
