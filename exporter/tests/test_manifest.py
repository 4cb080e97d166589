"""Tests for exporter.manifest: digests and canonical JSON."""

import hashlib
import json

from exporter import manifest


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
