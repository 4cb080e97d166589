"""The precision numerics_test takes an OpenVINO program to compute in here
(backend_hooks/checks/openvino_precision.py) is the one OpenVINO computes in once it imports a blob
as ExecuTorch's OpenvinoBackend does: with no configuration. A blob compiled with the f32 hint
still computes in the CPU plugin's default, bf16 on a CPU with bf16 units."""

import numpy as np
from runfiles import Runfiles

from backend_hooks.checks import openvino_precision
from exporter.core import backend_site

RUNFILES = Runfiles.Create()


def test_an_imported_blob_computes_in_the_precision_the_check_reports():
    backend_site.activate([RUNFILES.Rlocation("torch_export_backend_openvino/identity.txt")])
    import openvino
    from openvino import opset13

    x = opset13.parameter([2, 64], np.float32)
    weights = np.random.RandomState(0).randn(64, 64).astype(np.float32)
    model = openvino.Model([opset13.matmul(x, opset13.constant(weights), False, False)], [x])
    core = openvino.Core()
    blob = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"}).export_model().getvalue()
    imported = core.import_model(blob, "CPU", {})  # OpenvinoBackend.cpp: ov_core_import_model, no config
    reported = openvino_precision.runtime_precision()
    assert imported.get_property("INFERENCE_PRECISION_HINT").to_string() == reported
    inputs = np.random.RandomState(1).randn(2, 64).astype(np.float32)
    error = float(np.abs(imported(inputs)[0] - inputs @ weights).max())
    # f32 is exact to float32 rounding here; bf16 keeps 8 significant bits.
    assert (error < 1e-4) == (reported == "f32"), (reported, error)
