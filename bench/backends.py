"""docs/backends.md's measured table: tests/backends' conv + linear model lowered for each
backend with the exporter's own partitioners and patches (exporter/actions/delegates.py), in one
process: the second lowering's time (the first one warms the imports), the .pte's size, whether
both lowerings gave one sha256, and the largest error against eager in ExecuTorch's Python
runtime where the backend runs here.

    ./bazelw run //bench:backends
"""

import argparse
import hashlib
import os
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


def lower_twice(ep, backend, options):
    """(seconds of the second lowering, the .pte's bytes, whether both gave one sha256)."""
    digests, seconds, data = [], 0.0, b""
    for _ in range(2):
        start = time.perf_counter()
        with delegates.backend_patches([backend], options):
            data = to_edge_transform_and_lower(ep, partitioner=delegates.partitioners([backend], options)).to_executorch().buffer
        seconds = time.perf_counter() - start
        digests.append(hashlib.sha256(data).hexdigest())
    return seconds, data, digests[0] == digests[1]


def error(data, model, x):
    """The largest absolute difference from eager in ExecuTorch's Python runtime."""
    from executorch.runtime import Runtime

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "p.pte")
        with open(path, "wb") as f:
            f.write(data)
        out = Runtime.get().load_program(path).load_method("forward").execute([x])[0]
    return (out - model(x)).abs().max().item()


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("openvino_identity", help="@torch_export_backend_openvino's identity.txt")
    args = parser.parse_args(argv)
    backend_site.activate([args.openvino_identity])
    model = conv_linear()
    x = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    ep = torch.export.export(model, (x,))
    print("| Backend | Lowering (warm) | `.pte` bytes | Error against eager | Same sha256 twice in one process |")
    print("|---|---|---|---|---|")
    for title, backend, options in CASES:
        seconds, data, same = lower_twice(ep, backend, options)
        measured = "not run here" if backend == "coreml" else f"{error(data, model, x):.1e}"
        print(f"| {title} | {seconds:.1f} s | {len(data):,} | {measured} | {'yes' if same else 'no'} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
