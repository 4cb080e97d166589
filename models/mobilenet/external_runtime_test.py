"""Loads the external-weights MobileNet as an app does (the .pte with its .ptd), and checks that
the weights left the program: two versions share one .ptd, and each .pte is a fraction of the
inline program."""

import hashlib
import os

import torch
from executorch.extension.pybindings.portable_lib import _load_for_executorch
from runfiles import Runfiles

from exporter.formats import pte_inspect
from models.mobilenet.mobilenet import mobilenet_v2

RUNFILES = Runfiles.Create()


def _path(name):
    return RUNFILES.Rlocation(f"rules_torch_export/models/mobilenet/{name}")


def _sha256(name):
    with open(_path(name), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_pte_with_ptd_matches_eager():
    module = _load_for_executorch(_path("mobilenet_external_v2.pte"), data_path=_path("mobilenet_external_v2.ptd"))
    x = torch.randn(5, 3, 64, 64, generator=torch.Generator().manual_seed(5))
    (actual,) = module.run_method("forward", [x])
    with torch.no_grad():
        expected = mobilenet_v2(num_classes=10)(x)
    torch.testing.assert_close(actual, expected, rtol=1e-3, atol=1e-4)
    assert module.run_method("model_version", []) == [2]


def test_two_versions_share_one_weights_file():
    assert _sha256("mobilenet_external_v1.pte") != _sha256("mobilenet_external_v2.pte")
    assert _sha256("mobilenet_external_v1.ptd") == _sha256("mobilenet_external_v2.ptd")


def test_the_weights_left_the_program():
    inline = pte_inspect.summarize(_path("mobilenet_pte.pte"))
    external = pte_inspect.summarize(_path("mobilenet_external_v1.pte"))
    assert external["named_data"]["bytes"] == 0 < inline["named_data"]["bytes"]
    assert os.path.getsize(_path("mobilenet_external_v1.pte")) < 0.2 * inline["file_bytes"]
    # XNNPACK's weights, plus the constants outside the delegate (batch norm's step counters).
    weights = pte_inspect.summarize_ptd(_path("mobilenet_external_v1.ptd"))
    assert weights["bytes"] >= inline["named_data"]["bytes"]
    assert len(weights["tensors"]) >= inline["named_data"]["entries"]
