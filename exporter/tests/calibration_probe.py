"""One cell of determinism_test's matrix: the zoo's batch-norm estimation and the
TorchQuantize action's calibration, run in this process's kernel settings.

    calibration_probe.py WEIGHTS OUT_DIR PRECISIONS (pinned|free)

WEIGHTS holds the initial weights of a MobileNetV2 (made once, so that every cell starts from
the same bits). The probe estimates its batch-norm statistics from seeded noise (as
//models/mobilenet:mobilenet_wide does), exports it, and quantizes it with the TorchQuantize
action's own run() on the zoo's calibration images. It prints the sha256 of the statistics and
of the quantized .pt2 as JSON, for each precision in PRECISIONS ("float64", "float32" or
"float64,float32": {precision: {"batch_norm": ..., "quantized_pt2": ...}}). float32 is the
control: both steps in the model's own float32. Both precisions in one process share its start
and its kernel settings (ATen and MKL pick their code paths when they load); float64 runs first,
as float32 turns the float64 mode off for the rest of the process. Every step draws from its own
seeded generator, so neither run sees the other's.
"pinned" runs like every exporter action (determinism.reproducible_math); "free" uses two threads
with oneDNN and NNPACK on.
"""

import contextlib
import hashlib
import json
import os
import sys

import torch

from exporter.actions import calibrate, quantize, registry
from exporter.core import determinism, float64_math
from exporter.formats import pt2
from models.common import calibration, layers
from models.mobilenet.mobilenet import MobileNetV2

SPEC = {
    "dims": {"batch": {"min": 1, "max": 16}},
    "inputs": [{"name": "x", "value": {"tensor": {"shape": ["batch", 3, 64, 64], "dtype": "float32"}}}],
}


def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(a.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def _estimated_model(weights, dtype):
    model = MobileNetV2(num_classes=10, width=1, keepdim_pool=True)
    model.load_state_dict(torch.load(weights, weights_only=True))
    return layers.estimate_batch_norm(model, (8, 3, 64, 64), dtype=dtype)


def _quantized_pt2(model, out):
    batch = torch.export.Dim("batch", min=1, max=16)
    ep = torch.export.export(model, (torch.zeros(2, 3, 64, 64),), dynamic_shapes={"x": {0: batch}})
    pt2.save(ep, os.path.join(out, "float.pt2"))
    with open(os.path.join(out, "batches.pt"), "wb") as f:
        f.write(calibrate.serialize(calibration.images(count=4, batch=4, size=64)))
    identity = os.path.join(out, "identity.txt")
    with open(identity, "w", encoding="utf-8") as f:
        f.write("probe\n")
    config = registry.QuantizeConfig.from_json({
        "label": "//probe:q8", "identity": identity, "exported_label": "//probe:float",
        "pt2": os.path.join(out, "float.pt2"), "spec_label": "//probe:images", "spec": SPEC,
        "calibration": {"label": "//probe:calibration", "batches": os.path.join(out, "batches.pt")},
        "outputs": {"pt2": os.path.join(out, "q8.pt2"), "manifest": os.path.join(out, "q8.pt2.json")},
    })
    quantize.run(config)
    return hashlib.sha256(open(config.outputs["pt2"], "rb").read()).hexdigest()


def _cell(weights, out, precision, threads):
    if precision == "float32":  # the control: every step in the model's own float32
        float64_math.float64 = contextlib.nullcontext  # type: ignore[assignment]
    dtype = torch.float64 if precision == "float64" else torch.float32
    math: contextlib.AbstractContextManager
    if threads == "pinned":
        math = determinism.reproducible_math()
    else:
        torch.set_num_threads(2)
        math = contextlib.nullcontext()
    with math:
        model = _estimated_model(weights, dtype)
        statistics = [b for name, b in sorted(model.named_buffers()) if "running" in name]
        return {"batch_norm": _digest(*statistics), "quantized_pt2": _quantized_pt2(model, out)}


def main(weights, out, precisions, threads):
    precisions = precisions.split(",")
    assert precisions in (["float64"], ["float32"], ["float64", "float32"]), precisions
    results = {}
    for precision in precisions:
        folder = os.path.join(out, precision)
        os.makedirs(folder)
        results[precision] = _cell(weights, folder, precision, threads)
    print(json.dumps(results))


if __name__ == "__main__":
    main(*sys.argv[1:])
