"""Calibration batches for //zoo/options:ethos_u_q8_ep: seeded noise shaped like the :two_rows spec."""

import torch


def rows(count=4, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return [{"x": torch.randn(2, 8, generator=generator, dtype=torch.float64).float()} for _ in range(count)]
