"""determinism.reproducible_math: what an action computes does not follow the machine's kernels.

Each case runs a small convolution + layer norm + linear stack in a fresh process under other
kernel settings, standing in for other machines: oneDNN limited to AVX2 (an AVX2-only CPU),
one OpenMP thread, ATen's AVX2 kernels. Under reproducible_math (with the environment that
run_exporter sets) every process gives the same bits.
"""

import os
import subprocess
import sys

import pytest

from exporter.core import determinism

PROBE = """
import hashlib, sys, torch
from exporter.core import determinism
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Conv2d(16, 64, 3), torch.nn.LayerNorm([30, 30]), torch.nn.Linear(30, 30))
x = torch.randn(4, 16, 32, 32)
with torch.no_grad(), (determinism.reproducible_math() if sys.argv[1] == "pinned" else torch.no_grad()):
    print(hashlib.sha256(net(x).numpy().tobytes()).hexdigest())
"""

MACHINES = {"as is": {}, "AVX2-only oneDNN": {"ONEDNN_MAX_CPU_ISA": "AVX2"},
            "one thread": {"OMP_NUM_THREADS": "1"}, "AVX2 ATen": {"ATEN_CPU_CAPABILITY": "avx2"}}


def _digest(mode, machine):
    env = dict(os.environ, **MACHINES[machine])
    if mode == "pinned":
        env.update(determinism.REPRODUCIBLE_MATH_ENV)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(determinism.__file__))))
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", PROBE, mode], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def pinned():
    return {machine: _digest("pinned", machine) for machine in MACHINES}


def test_every_machine_computes_the_same_bits(pinned):
    assert len(set(pinned.values())) == 1, pinned


def _has_avx512():
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        return " avx512f" in f.read()


def test_without_it_the_bits_follow_onednns_instruction_set():
    """The control: on an AVX-512 machine, oneDNN's AVX2 kernels give other bits. (An AVX2-only
    machine computes the same either way, so there is nothing to contrast there.)"""
    free = {machine: _digest("free", machine) for machine in ("as is", "AVX2-only oneDNN")}
    if _has_avx512():
        assert free["as is"] != free["AVX2-only oneDNN"]
    else:
        assert free["as is"] == free["AVX2-only oneDNN"]
