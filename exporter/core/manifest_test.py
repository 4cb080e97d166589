"""Tests for exporter.core.manifest: digests and canonical JSON."""

import hashlib
import json

from exporter.core import manifest


def test_sha256_file_matches_hashlib(tmp_path):
    path = tmp_path / "blob"
    data = b"x" * (3 << 20)  # more than one read block
    path.write_bytes(data)
    assert manifest.sha256_file(str(path)) == hashlib.sha256(data).hexdigest()


def test_write_json_is_canonical(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    manifest.write_json(str(a), {"b": 1, "a": {"z": 2, "y": 3}})
    manifest.write_json(str(b), {"a": {"y": 3, "z": 2}, "b": 1})
    assert a.read_bytes() == b.read_bytes()
    assert a.read_text().endswith("}\n")
    assert not (tmp_path / "a.json.tmp").exists()


def test_toolchain_record_reads_versions(tmp_path):
    identity = tmp_path / "identity.txt"
    identity.write_text("python 3.11.7 cpython-311\nexecutorch==1.4.1\nsympy==1.14.0\ntorch==2.13.0+cpu\n")
    record = manifest.toolchain_record(str(identity))
    assert record["torch"] == "2.13.0+cpu"
    assert record["executorch"] == "1.4.1"
    assert record["python"] == "3.11.7"
    assert "sympy" not in record
    assert len(record["identity_sha256"]) == 64


def test_operator_histogram_counts_calls():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) + torch.relu(x * 2)

    ep = torch.export.export(M(), (torch.randn(2, 3),))
    counts = manifest.operator_histogram([ep.graph_module])
    assert counts["aten.relu.default"] == 2
    assert counts["aten.add.Tensor"] == 1
    assert list(counts) == sorted(counts)
    json.dumps(counts)


def _files(tmp_path, contents):
    paths = {}
    for rel, text in contents.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths[rel] = str(path)
    return paths


def _export_config(paths, out_dir="bazel-out/k8-fastbuild/bin"):
    return {
        "label": "//zoo:mlp_ep",
        "identity": paths["identity.txt"],
        "model": {
            "label": "//zoo:mlp",
            "entry": "zoo.mlp:Mlp",
            "srcs": [paths["zoo/mlp.py"]],
            "checkpoint": paths["zoo/mlp.pt"],
            "import_roots": ["."],
        },
        "spec": {"dims": {"batch": {"min": 1, "max": 8, "example": 2}}, "inputs": []},
        "spec_label": "//zoo:vec",
        "outputs": {"pt2": f"{out_dir}/zoo/mlp_ep.pt2"},
    }


def test_export_inputs_record_digests_sources_checkpoint_spec_and_toolchain(tmp_path):
    paths = _files(tmp_path, {"identity.txt": "torch==2\n", "zoo/mlp.py": "x = 1\n", "zoo/mlp.pt": "w"})
    record = manifest.inputs_record(_export_config(paths))
    assert record["sources"] == {paths["zoo/mlp.py"]: hashlib.sha256(b"x = 1\n").hexdigest()}
    assert record["checkpoint"] == hashlib.sha256(b"w").hexdigest()
    assert record["toolchain_identity"] == hashlib.sha256(b"torch==2\n").hexdigest()
    assert len(record["spec"]) == len(record["settings"]) == 64
    assert "pt2" not in record


def test_lower_inputs_record_has_the_program_and_no_empty_sources(tmp_path):
    paths = _files(tmp_path, {"identity.txt": "torch==2\n", "mlp_ep.pt2": "program"})
    config = {"label": "//zoo:mlp_pte", "identity": paths["identity.txt"], "pt2": paths["mlp_ep.pt2"],
              "backends": ["xnnpack"], "outputs": {"pte": "out.pte"}}
    record = manifest.inputs_record(config)
    assert record["pt2"] == hashlib.sha256(b"program").hexdigest()
    assert set(record) == {"pt2", "settings", "toolchain_identity"}
    config["backends"] = []
    assert manifest.inputs_record(config)["settings"] != record["settings"]


def test_inputs_record_ignores_output_locations_but_not_the_spec(tmp_path):
    paths = _files(tmp_path, {"identity.txt": "i", "zoo/mlp.py": "x = 1\n", "zoo/mlp.pt": "w"})
    fastbuild = manifest.inputs_record(_export_config(paths))
    opt = manifest.inputs_record(_export_config(paths, out_dir="bazel-out/k8-opt/bin"))
    assert fastbuild == opt
    changed = _export_config(paths)
    changed["spec"]["dims"]["batch"]["max"] = 16
    assert manifest.inputs_record(changed)["spec"] != fastbuild["spec"]


def test_source_path_drops_the_output_configuration():
    assert manifest.source_path("bazel-out/k8-opt/bin/zoo/gen.py") == "zoo/gen.py"
    assert manifest.source_path("zoo/mlp.py") == "zoo/mlp.py"
    assert manifest.source_path("external/repo/m.py") == "external/repo/m.py"
