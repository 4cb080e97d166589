"""OpenVINO and Core ML in every program form (docs/backends.md, "Every program form"):
executorch_programs' variants record their backend and options, and a model_bundle's index names
each program's backends, options and per-method backends."""

import hashlib
import json
import os

PACKAGE = "tests/backends/"
BUNDLE = PACKAGE + "conv_linear_bundle/"


def _json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _delegate_ids(record, method="forward"):
    return sorted(record["methods"][method]["delegates"])


def test_each_variant_records_its_backend_and_options():
    openvino = _json(PACKAGE + "conv_linear_variants_openvino_bf16.pte.json")
    coreml = _json(PACKAGE + "conv_linear_variants_coreml_fp16.pte.json")
    assert openvino["backends"] == ["openvino"]
    assert openvino["backend_packages"]["openvino"]["options"] == {"device": "CPU", "precision": "bf16"}
    assert _delegate_ids(openvino) == ["OpenvinoBackend"]
    assert coreml["backends"] == ["coreml"]
    assert coreml["backend_packages"]["coreml"]["options"] == {
        "compute_units": "cpu_and_ne", "minimum_deployment_target": "iOS17", "precision": "fp16"}
    assert _delegate_ids(coreml) == ["CoreMLBackend"]


def test_the_bundle_index_names_each_programs_backends_and_options():
    programs = _json(BUNDLE + "index.json")["programs"]
    entry = {label.rsplit(":", 1)[1]: record for label, record in programs.items()}
    assert sorted(entry) == ["conv_linear_coreml", "conv_linear_mixed", "conv_linear_openvino", "conv_linear_xnnpack"]
    assert entry["conv_linear_xnnpack"]["backends"] == ["xnnpack"]
    assert "backend_packages" not in entry["conv_linear_xnnpack"]  # as every XNNPACK index had
    assert entry["conv_linear_openvino"]["backend_packages"]["openvino"]["options"]["precision"] == "f32"
    assert "per_machine" in entry["conv_linear_openvino"]["backend_packages"]["openvino"]
    assert entry["conv_linear_coreml"]["backend_packages"]["coreml"]["options"]["precision"] == "fp32"
    assert entry["conv_linear_mixed"]["method_backends"] == {"forward": ["xnnpack"], "intel": ["openvino"]}
    assert _delegate_ids(entry["conv_linear_mixed"], "intel") == ["OpenvinoBackend"]


def test_the_bundle_holds_each_program_under_its_sha256():
    programs = _json(BUNDLE + "index.json")["programs"]
    for label, record in programs.items():
        with open(BUNDLE + record["file"], "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == record["sha256"], label
    assert sorted(os.listdir(BUNDLE)) == sorted([r["file"] for r in programs.values()] + ["index.json"])
