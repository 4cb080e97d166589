"""Calibration clips for the int8 keyword spotter: seeded noise shaped like :mfcc_clips."""

import torch


def clips(count=8, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return [{"mfcc": torch.randn(4, 40, 100, generator=generator)} for _ in range(count)]
