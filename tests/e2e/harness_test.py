"""Fast checks of the e2e harness itself: log parsing, labels, and what a copy contains."""

import os

from tests.e2e import harness

# Two spawns as Bazel 4.2.3 writes them: pretty-printed objects back to back, no array.
_LOG = """{
  "commandArgs": ["external/torch_export_venv/python.sh", "exporter/main.py"],
  "mnemonic": "TorchExport",
  "runner": "linux-sandbox",
  "remoteCacheHit": false,
  "actualOutputs": [{"path": "bazel-out/k8-fastbuild/bin/zoo/mlp_ep.pt2"},
                    {"path": "bazel-out/k8-fastbuild/bin/zoo/mlp_ep.pt2.json"}]
}{
  "mnemonic": "ExecuTorchLower",
  "runner": "remote cache hit",
  "remoteCacheHit": true,
  "actualOutputs": [{"path": "bazel-out/k8-fastbuild/bin/zoo/sub/mlp_pte.pte"}]
}
"""


def test_parse_execution_log_reads_a_stream_of_objects():
    spawns = harness.parse_execution_log(_LOG)
    assert [s["mnemonic"] for s in spawns] == ["TorchExport", "ExecuTorchLower"]
    assert harness.parse_execution_log("") == []


def test_result_separates_executed_spawns_from_cache_hits():
    result = harness.Result(["build"], 0, "", "", harness.parse_execution_log(_LOG))
    assert result.labels("TorchExport") == ["//zoo:mlp_ep"]
    assert result.labels("ExecuTorchLower") == []
    assert [s["runner"] for s in result.cache_hits("ExecuTorchLower")] == ["remote cache hit"]
    assert result.labels("ExecuTorchLower", executed_only=False) == ["//zoo/sub:mlp_pte"]


def test_tests_run_counts_each_test_once():
    tools = "external/bazel_tools/tools/test/"
    spawns = [
        {"mnemonic": "TestRunner", "commandArgs": [tools + "test-setup.sh", "zoo/a_test"]},
        {"mnemonic": "TestRunner", "commandArgs": [tools + "generate-xml.sh", "x"]},
        {"mnemonic": "TestRunner", "commandArgs": [tools + "test-setup.sh", "zoo/b_test"],
         "remoteCacheHit": True},
    ]
    assert harness.Result(["test"], 0, "", "", spawns).tests_run() == ["zoo/a_test"]


def test_copy_leaves_out_symlinks_personal_files_and_other_trees(tmp_path):
    src = tmp_path / "src"
    files = ("WORKSPACE", "rules/defs.bzl", "rules/__pycache__/x.pyc", "user.bazelrc", "models/BUILD")
    for rel in files:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(rel)
    os.symlink(str(tmp_path), str(src / "bazel-bin"))
    dest = tmp_path / "dest"
    include = ("WORKSPACE", "rules", "user.bazelrc", "bazel-bin")
    harness.copy_sources(str(dest), include=include, root=str(src))
    copied = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert copied == ["WORKSPACE", "rules/defs.bzl"]


def test_source_root_is_this_repository():
    root = harness.source_root()
    assert os.path.isfile(os.path.join(root, "WORKSPACE"))
    assert os.path.isfile(os.path.join(root, "tests", "e2e", "harness.py"))
