"""docs/backends.md's Arm figures: tests/backends' conv + linear model lowered for TOSA (FP) and,
quantized by torch_quantize(quantizer = "ethos_u"), for an Ethos-U55-128, with the exporter's own
lowering, three times each in one process: each lowering's time (the first one warms the
imports), the .pte's size and its sha256 (its first 16 digits, to compare across checkouts and
machines), if all three gave one.

    ./bazelw run //bench:arm
"""

import hashlib
import sys
import time

from exporter.actions import lower
from exporter.core import backend_site
from exporter.core.backends import BackendOptions, EthosUOptions, TosaOptions
from exporter.formats import pt2

CASES = [
    ("TOSA, `FP`", "tosa", BackendOptions(tosa=TosaOptions())),
    ("Ethos-U55-128, int8", "ethos_u", BackendOptions(ethos_u=EthosUOptions())),
]


def lower_three_times(path, backend, options):
    """([seconds of each lowering], the .pte's size, its sha256 if all gave one, else "differ")."""
    seconds, digests, size = [], set(), 0
    for _ in range(3):
        ep = pt2.load(path)
        start = time.perf_counter()
        program, _ = lower.lower(ep, [backend], backend_options=options)
        seconds.append(time.perf_counter() - start)
        digests.add(hashlib.sha256(program.buffer).hexdigest())
        size = len(program.buffer)
    return seconds, size, digests.pop()[:16] if len(digests) == 1 else "differ"


def main(argv):
    identity, pt2s = argv[0], [a for a in argv[1:] if a.endswith(".pt2")]  # the float one first
    float_pt2, quantized_pt2 = pt2s
    backend_site.activate([identity])
    print("| Program | Lowerings (s) | `.pte` bytes | sha256, three times |\n|---|---|---|---|")
    for (title, backend, options), path in zip(CASES, (float_pt2, quantized_pt2)):
        seconds, size, digest = lower_three_times(path, backend, options)
        print(f"| {title} | {', '.join(f'{s:.1f}' for s in seconds)} | {size:,} | {digest} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
