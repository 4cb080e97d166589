"""Calibration batches for the quantized zoo: seeded images, made in the build (no downloads).

The zoo's models have seeded random weights, not trained ones, so images of seeded noise
exercise them as well as photographs would. A seed other than the numerics tests' (0) keeps
the calibration batches apart from the inputs that the quantized programs are judged on.
"""

import torch


def images(count=16, batch=4, channels=3, size=64, seed=1):
    """`count` batches of `batch` normal-noise images, {"x": float32[batch, channels, size, size]}.

    Drawn in float64 and rounded: torch's float32 normal sampler has a vectorised variant per
    instruction set, whose last bits differ from the plain one's; the float64 sampler has none.
    """
    generator = torch.Generator().manual_seed(seed)
    return [{"x": torch.randn(batch, channels, size, size, generator=generator, dtype=torch.float64).float()}
            for _ in range(count)]
