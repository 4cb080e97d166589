"""What an action computes does not follow the machine's kernels (docs/caching.md).

Two probes, each run in fresh processes under other kernel settings, which stand in for other
machines (ATen and MKL pick their code paths when they load, so each setting needs its own
process):

- a convolution + layer norm + linear stack under determinism.reproducible_math, against oneDNN's
  instruction sets, thread counts and ATen's vector widths;
- the kernel-settings matrix: the zoo's batch-norm estimation and the TorchQuantize action's
  calibration of a MobileNetV2 (calibration_probe.py) under ATen's vector widths (none, AVX2,
  AVX-512 where the CPU has it), MKL's code branches and two threads with oneDNN on. Both
  compute in float64 and round once, so every setting gives the same bytes; the control runs
  the same steps in float32 and gets other bytes, so the matrix can tell.

The processes in the actions' own setting share one (REFERENCE_PROCESS): the first probe's
pinned digest, the matrix's initial weights and its reference cell.
"""

import functools
import json
import os
import subprocess
import sys

import pytest
import torch

from exporter.core import determinism

# The repository's root in the runfiles, for the probes' imports (exporter, models).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(determinism.__file__))))
PROBE_PATH = os.path.join(ROOT, "exporter", "tests", "calibration_probe.py")

# The convolution stack's digest, with or without reproducible_math.
CONV = """
import hashlib, torch
from exporter.core import determinism
def conv_digest(pinned):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(16, 64, 3), torch.nn.LayerNorm([30, 30]), torch.nn.Linear(30, 30))
    x = torch.randn(4, 16, 32, 32)
    with torch.no_grad(), (determinism.reproducible_math() if pinned else torch.no_grad()):
        return hashlib.sha256(net(x).numpy().tobytes()).hexdigest()
"""

PROBE = CONV + """
import sys
print(conv_digest(sys.argv[1] == "pinned"))
"""

# One MobileNetV2's initial weights, saved to a path.
MAKE_WEIGHTS = """
def make_weights(path):
    import torch
    from models.mobilenet.mobilenet import MobileNetV2
    torch.manual_seed(0)
    torch.save(MobileNetV2(num_classes=10, width=1, keepdim_pool=True).state_dict(), path)
"""

# The actions' own setting (determinism.REPRODUCIBLE_MATH_ENV) is the environment of three probes,
# run in one process, in this order: the convolution stack's pinned digest (first, before any
# other import), the initial weights, and the calibration probe's reference cell.
#     -c REFERENCE_PROCESS CALIBRATION_PROBE WEIGHTS OUT_DIR PRECISIONS THREADS
REFERENCE_PROCESS = CONV + MAKE_WEIGHTS + """
import runpy, sys
print("conv", conv_digest(True), flush=True)
make_weights(sys.argv[2])
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""

MACHINES = {"as is": {}, "AVX2-only oneDNN": {"ONEDNN_MAX_CPU_ISA": "AVX2"},
            "one thread": {"OMP_NUM_THREADS": "1"}, "AVX2 ATen": {"ATEN_CPU_CAPABILITY": "avx2"}}


def _has_avx512():
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        return " avx512f" in f.read()


def _run(arguments, environment):
    env = dict(os.environ)
    for name in ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "OMP_NUM_THREADS"):
        env.pop(name, None)
    env.update(environment)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable] + arguments, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()


def _environment(mode, machine):
    """A machine's environment (sorted items) in mode."""
    environment = dict(MACHINES[machine])
    if mode == "pinned":
        environment.update(determinism.REPRODUCIBLE_MATH_ENV)
    return tuple(sorted(environment.items()))


def _digest(mode, machine):
    return _probe(mode, _environment(mode, machine))


@functools.cache
def _probe(mode, environment):
    """The probe's digest in a process of environment (sorted items): machines whose settings
    come out the same (the pinned setting's own ATEN_CPU_CAPABILITY is avx2) run it once."""
    return _run(["-c", PROBE, mode], dict(environment))[-1]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """REFERENCE_PROCESS's results, in the actions' own setting: {"conv": the convolution stack's
    pinned digest, "weights": the path of one MobileNetV2's initial weights, "cell": the matrix's
    reference cell (float64 and float32)}. The weights are made under the actions' pinned
    setting (seeded initialisation draws with ATen's vectorised kernels, which differ from the
    plain ones), so every cell starts from them."""
    weights = str(tmp_path_factory.mktemp("weights") / "mobilenet.pt")
    out = str(tmp_path_factory.mktemp("cell"))
    lines = _run(["-c", REFERENCE_PROCESS, PROBE_PATH, weights, out, "float64,float32", "pinned"],
                 determinism.REPRODUCIBLE_MATH_ENV)
    conv = [line.split()[1] for line in lines if line.startswith("conv ")]
    assert len(conv) == 1, lines
    return {"conv": conv[0], "weights": weights, "cell": json.loads(lines[-1])}


@pytest.fixture(scope="module")
def pinned(reference):
    """Each machine's pinned digest; the machines whose environment is the actions' own setting
    take the reference process's."""
    own = tuple(sorted(determinism.REPRODUCIBLE_MATH_ENV.items()))
    return {machine: reference["conv"] if _environment("pinned", machine) == own else _digest("pinned", machine)
            for machine in MACHINES}


def test_every_machine_computes_the_same_bits(pinned):
    assert len(set(pinned.values())) == 1, pinned


def test_without_it_the_bits_follow_onednns_instruction_set():
    """The control: on an AVX-512 machine, oneDNN's AVX2 kernels give other bits. (An AVX2-only
    machine computes the same either way, so there is nothing to contrast there.)"""
    free = {machine: _digest("free", machine) for machine in ("as is", "AVX2-only oneDNN")}
    if _has_avx512():
        assert free["as is"] != free["AVX2-only oneDNN"]
    else:
        assert free["as is"] == free["AVX2-only oneDNN"]


# The kernel-settings matrix, a row per setting: (id, environment, "pinned" as every action runs,
# or "free"). "pinned" is exactly the actions' own setting, the one every row is compared with.
# A row's id starts with "nightly-" when only //exporter/core:determinism_nightly_test runs it
# (tools/ci/tiers.bzl): every build compares the actions' setting with ATen's plain kernels and
# MKL's compatible branch, the code paths farthest from it, which are the control's two as well.
KERNEL_SETTINGS = [
    ("pinned", determinism.REPRODUCIBLE_MATH_ENV, "pinned"),
    ("no_vectors_mkl_compatible", {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}, "pinned"),
    ("nightly-avx2_mkl_sse4_2", {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "SSE4_2"}, "pinned"),
    ("nightly-avx2_mkls_own_choice", {"ATEN_CPU_CAPABILITY": "avx2"}, "pinned"),
    ("nightly-two_threads_onednn_nnpack", {}, "free"),
]
if _has_avx512():
    KERNEL_SETTINGS.append(
        ("nightly-avx512_mkl_avx512", {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AVX512,STRICT"}, "pinned"))
REFERENCE = KERNEL_SETTINGS[0][0]

# The control needs only two settings that differ in float32: the reference and every build's row.
CONTROL_SETTINGS = (REFERENCE, "no_vectors_mkl_compatible")


@pytest.fixture(scope="module")
def cells(reference, tmp_path_factory):
    """A setting's digests by precision, from one probe process per setting: float64, and for the
    control's settings float32 too (in the same process, after float64). The reference cell's
    process is REFERENCE_PROCESS."""
    rows = {row_id: (environment, threads) for row_id, environment, threads in KERNEL_SETTINGS}
    assert rows[REFERENCE] == (determinism.REPRODUCIBLE_MATH_ENV, "pinned") and REFERENCE in CONTROL_SETTINGS
    done = {REFERENCE: reference["cell"]}

    def cell(row_id):
        if row_id not in done:
            environment, threads = rows[row_id]
            precisions = "float64,float32" if row_id in CONTROL_SETTINGS else "float64"
            out = str(tmp_path_factory.mktemp("cell"))
            done[row_id] = json.loads(_run([PROBE_PATH, reference["weights"], out, precisions, threads],
                                           environment)[-1])
        return done[row_id]

    return cell


@pytest.mark.parametrize("row_id", [row[0] for row in KERNEL_SETTINGS[1:]])
def test_calibrated_bytes_are_the_same_under_every_kernel_setting(cells, row_id):
    """Each row's bytes are the reference's, so every row's are the same."""
    for key in ("batch_norm", "quantized_pt2"):
        digests = {name: cells(name)["float64"][key] for name in (REFERENCE, row_id)}
        assert len(set(digests.values())) == 1, (key, digests)


def test_the_control_in_float32_gives_other_bytes(cells):
    """Without float64 the same steps follow the kernels, so the matrix above can fail."""
    for key in ("batch_norm", "quantized_pt2"):
        digests = {name: cells(name)["float32"][key] for name in CONTROL_SETTINGS}
        assert len(set(digests.values())) == 2, (key, digests)


def test_float64_math_keeps_float64_until_a_float32_tensor_is_written():
    """The mode computes a graph's float32 operators in float64 from one operator to the next;
    a store into a float32 tensor (an observer's statistic, a buffer) rounds once, and views
    still alias their base."""
    from exporter.core import float64_math

    one, tiny = torch.tensor([1.0]), torch.tensor([2.0 ** -30])
    store = torch.zeros(2)
    with float64_math.float64():
        # (1 + 2**-30) - 1 is 0 in float32 steps; in float64 the small term survives.
        difference = torch.ops.aten.sub.Tensor(torch.ops.aten.add.Tensor(one, tiny), one)
        assert difference.dtype == torch.float64
        view = torch.ops.aten.slice.Tensor(store, 0, 1, 2)
        torch.ops.aten.copy_.default(view, difference)
    assert store.dtype == torch.float32
    assert store.tolist() == [0.0, 2.0 ** -30]  # written through the view, rounded to float32
    assert (one + tiny - one).item() == 0.0
