"""Determinism of what an action computes: the same bits on every machine (reproducible math)
and seeded generators for a model's construction."""

import contextlib
import random

# What an action computes for real (a model's weights built from seeded noise, calibration
# statistics, a bundle's expected outputs) must come out bit for bit the same on every machine,
# or two machines write different .pt2 files and share no cache. Float results follow the
# kernels: the vector width (AVX-512 or AVX2), oneDNN's blocking (tuned to the cache sizes), and
# the thread count (the order of partial sums). So actions run with one thread, without oneDNN
# and NNPACK, with ATen's AVX2 kernels and MKL's AVX2 code path in its reproducible mode (the
# two variables below, which run_exporter sets from exporter_facts.bzl: they act when the
# libraries load). Measured:
# ResNet-18's calibration took 14 s so against 23 s with two threads and oneDNN.
REPRODUCIBLE_MATH_ENV = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2,STRICT"}


@contextlib.contextmanager
def reproducible_math():
    """Runs the block with one thread and without oneDNN and NNPACK (see above)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.backends.mkldnn.flags(enabled=False), torch.backends.nnpack.flags(enabled=False):
            yield
    finally:
        torch.set_num_threads(threads)


def seed_everything(seed=0):
    """Seeds every generator that a model's construction may draw from."""
    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass
