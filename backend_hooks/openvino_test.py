"""OpenVINO's precision hint reaches its compiler: while a lowering runs, the call that ExecuTorch's
OpenvinoBackend.preprocess makes, openvino_compile(module, *args, options=<its compile specs>),
gets INFERENCE_PRECISION_HINT beside the specs. A stand-in module takes OpenVINO's place, so the
test runs without OpenVINO (tests/backends lowers real programs)."""

import sys
import types

import pytest

from exporter.actions import delegates
from exporter.core.backends import BackendOptions, OpenvinoOptions


@pytest.fixture
def preprocess(monkeypatch):
    """A stand-in of executorch.backends.openvino.preprocess whose openvino_compile records its calls."""
    calls: list = []

    def openvino_compile(graph_module, *args, options=None):
        calls.append((graph_module, args, options))
        return "compiled"

    module = types.SimpleNamespace(openvino_compile=openvino_compile, calls=calls)
    package = types.SimpleNamespace(preprocess=module)
    monkeypatch.setitem(sys.modules, "executorch.backends.openvino", package)
    monkeypatch.setitem(sys.modules, "executorch.backends.openvino.preprocess", module)
    return module


@pytest.mark.parametrize("options, hint", [
    (None, "f32"),  # the default
    (BackendOptions(openvino=OpenvinoOptions(precision="bf16")), "bf16"),
    (BackendOptions(openvino=OpenvinoOptions(device="GPU", precision="f16")), "f16"),
])
def test_the_precision_hint_joins_the_compile_specs_while_the_lowering_runs(preprocess, options, hint):
    original = preprocess.openvino_compile
    with delegates.backend_patches(["openvino"], options):
        # As OpenvinoBackend.preprocess calls it: the module, its inputs, the compile specs as strings.
        assert preprocess.openvino_compile("module", "x", options={"device": "CPU"}) == "compiled"
    assert preprocess.calls == [("module", ("x",), {"device": "CPU", "config": {"INFERENCE_PRECISION_HINT": hint}})]
    assert preprocess.openvino_compile is original  # restored after the lowering


def test_a_lowering_without_openvino_leaves_its_compiler_alone(preprocess):
    original = preprocess.openvino_compile
    with delegates.backend_patches(["xnnpack"], BackendOptions(openvino=OpenvinoOptions(precision="bf16"))):
        assert preprocess.openvino_compile is original
