"""delegate_structure_test's runner (exporter/checks/delegate_structure.py) with Core ML's reader
(coreml_structure.py) on real programs: a Core ML program's
model package has the method's inputs and outputs; a damaged delegate and a program without Core
ML fail, each in one line."""

from exporter.checks import contract, delegate_structure
from exporter.core import backends

COREML = "exporter/tests/conv_net_coreml_pte.pte"  # batch 1 to 32 of 3x32x32 images
XNNPACK = "exporter/tests/tiny_xnnpack_pte.pte"


def _run(pte):
    return delegate_structure.run(contract.DelegateStructureConfig.from_json(
        {"label": "//pkg:structure_test", "program": "//pkg:program", "pte": pte}))


def test_a_core_ml_program_is_a_model_package_with_the_method_inputs_and_outputs():
    ok, report = _run(COREML)
    assert ok, report
    assert report == "//pkg:program: method forward: a Core ML model package, inputs [[32, 3, 32, 32]], outputs [[]]\n"


def test_a_damaged_delegate_fails_naming_the_method(tmp_path):
    from exporter.formats import pte_inspect

    data = bytearray(open(COREML, "rb").read())
    found = delegate_structure.payloads(bytes(data), pte_inspect.read_program(bytes(data)),
                                       backends.record("coreml").delegate_id)
    [payload] = found["forward"]
    end = bytes(data).find(payload) + len(payload)
    data[end - 64:end] = bytes(64)  # the flattened folder's index, which executorchcoreml writes last
    damaged = tmp_path / "damaged.pte"
    damaged.write_bytes(bytes(data))
    ok, report = _run(str(damaged))
    assert not ok
    assert report.startswith("//pkg:structure_test: //pkg:program: method forward's Core ML delegate "
                             "is not a model package coremltools loads"), report
    assert "(RuntimeError: Failed to de-serialize bytes object!)" in report
    assert report.count("\n") == 1


def test_inputs_that_differ_from_the_method_are_named():
    method = {"inputs": [{"type": "tensor", "sizes": [32, 3, 32, 32]}], "outputs": [{"type": "tensor"}]}
    assert delegate_structure._mismatch(method, [[32, 3, 32, 32]], [[]]) is None
    assert delegate_structure._mismatch(method, [[1, 3, 32, 32]], [[]]) == \
        "its inputs' shapes are [[1, 3, 32, 32]], the method's [[32, 3, 32, 32]]"
    assert delegate_structure._mismatch(method, [[32, 3, 32, 32]], [[], []]) == "it has 2 output(s), the method 1"


def test_a_program_without_core_ml_fails():
    ok, report = _run(XNNPACK)
    assert not ok
    assert report == ("//pkg:structure_test: //pkg:program has no Core ML delegate; lower it with backends = "
                      "[coreml(...)] or remove this test\n")
