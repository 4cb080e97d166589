"""docs/backends.md's measured table: tests/backends' conv + linear model lowered for each
backend with the exporter's own partitioners and patches (exporter/actions/delegates.py, through each backend's hooks), in one
process: the second lowering's time (the first one warms the imports), the .pte's size, whether
both lowerings gave one sha256, and the largest error against eager in ExecuTorch's Python
runtime where the backend runs here.

    ./bazelw run //bench:backends
    ./bazelw run //bench:backends -- --isa     OpenVINO's .pte lowered under each instruction set

--isa lowers the OpenVINO program in one process per oneDNN instruction-set cap
(ONEDNN_MAX_CPU_ISA, which OpenVINO's CPU plugin honours as a CPU without the newer units would
make it) and prints each .pte's sha256: the same sha256 under every cap would make the program
independent of the CPU that lowered it (docs/caching.md, "Per-machine programs").
"""

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time

import torch
from executorch.exir import to_edge_transform_and_lower

from exporter.actions import delegates
from exporter.core import backend_site
from exporter.core.backends import BackendOptions, CoremlOptions, OpenvinoOptions
from tests.backends.conv_linear import conv_linear

CASES = [
    ("XNNPACK", "xnnpack", BackendOptions()),
    ("OpenVINO, `f32`", "openvino", BackendOptions(openvino=OpenvinoOptions())),
    ("Core ML, `fp32`", "coreml", BackendOptions(coreml=CoremlOptions(precision="fp32"))),
    ("Core ML, `fp16`", "coreml", BackendOptions(coreml=CoremlOptions(precision="fp16"))),
]


def lower_twice(ep, backend, options, times=2):
    """(seconds of the last lowering, the .pte's bytes, whether all gave one sha256)."""
    digests, seconds, data = [], 0.0, b""
    for _ in range(times):
        start = time.perf_counter()
        with delegates.backend_patches([backend], options):
            data = to_edge_transform_and_lower(ep, partitioner=delegates.partitioners([backend], options)).to_executorch().buffer
        seconds = time.perf_counter() - start
        digests.append(hashlib.sha256(data).hexdigest())
    return seconds, data, len(set(digests)) == 1


def error(data, model, x):
    """The largest absolute difference from eager in ExecuTorch's Python runtime."""
    from executorch.runtime import Runtime

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "p.pte")
        with open(path, "wb") as f:
            f.write(data)
        out = Runtime.get().load_program(path).load_method("forward").execute([x])[0]
    return (out - model(x)).abs().max().item()


# The oneDNN caps --isa tries, oldest first; "" is no cap (the machine's best).
ISA_CAPS = ("SSE41", "AVX", "AVX2", "AVX512_CORE", "")


def openvino_digest(ep):
    """The sha256 of the OpenVINO program's .pte, lowered once."""
    _, data, _ = lower_twice(ep, "openvino", CASES[1][2], times=1)
    return hashlib.sha256(data).hexdigest()


def isa_table(identity):
    """One row per cap: the .pte's sha256 from a process of its own under that cap."""
    print("| `ONEDNN_MAX_CPU_ISA` | OpenVINO `.pte` sha256 |\n|---|---|")
    for cap in ISA_CAPS:
        env = dict(os.environ, ONEDNN_MAX_CPU_ISA=cap) if cap else dict(os.environ)
        out = subprocess.run([sys.executable, __file__, identity, "--one-openvino-digest"], env=env,
                             check=True, capture_output=True, text=True).stdout.split()[-1]
        print(f"| {cap or '(none: this CPU)'} | {out[:16]}... |", flush=True)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("openvino_identity", help="@torch_export_backend_openvino's identity.txt")
    parser.add_argument("--isa", action="store_true", help="the OpenVINO .pte's sha256 per instruction set")
    parser.add_argument("--one-openvino-digest", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.isa:
        return isa_table(os.path.abspath(args.openvino_identity))
    backend_site.activate([args.openvino_identity])
    model = conv_linear()
    x = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    ep = torch.export.export(model, (x,))
    if args.one_openvino_digest:
        return print(openvino_digest(ep))
    print("| Backend | Lowering (warm) | `.pte` bytes | Error against eager | Same sha256 twice in one process |")
    print("|---|---|---|---|---|")
    for title, backend, options in CASES:
        seconds, data, same = lower_twice(ep, backend, options)
        measured = "not run here" if backend == "coreml" else f"{error(data, model, x):.1e}"
        print(f"| {title} | {seconds:.1f} s | {len(data):,} | {measured} | {'yes' if same else 'no'} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
