"""Calibration batches for //zoo:conv_q8_ep: seeded noise shaped like the :signal spec."""

import torch


def signals(count=4, batch=4, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return [{"x": torch.randn(batch, 2, 16, generator=generator)} for _ in range(count)]
