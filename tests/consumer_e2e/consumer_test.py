"""examples/consumer builds and passes its tests with the rules loaded as an external repository."""

import json
import os

import pytest

from tests.e2e import harness

CONSUMER = "examples/consumer"
TESTS = [
    "//keywords:keyword_net_graph_test",
    "//keywords:keyword_net_numerics_test",
    "//keywords:keyword_net_runtime_test",
]


@pytest.fixture(scope="module")
def consumer():
    """A copy of the rules plus examples/consumer; Bazel runs in the consumer's folder."""
    base = harness.scratch_dir()
    root = os.path.join(base, "checkout")
    harness.copy_sources(root, harness.DEFAULT_INCLUDE + (CONSUMER,))
    ws = harness.Workspace(
        os.path.join(root, CONSUMER),
        os.path.join(base, "output_bases", "consumer"),
        os.path.join(base, "home"),
    )
    with ws:
        yield ws


def test_consumer_builds_and_tests(consumer):
    result = consumer.bazel("test", "//...")
    assert result.code == 0, result.stderr[-6000:]
    for label in TESTS:
        assert any(line.startswith(label) and "PASSED" in line for line in result.stdout.splitlines() + result.stderr.splitlines()), (
            f"{label} did not pass:\n{result.stderr[-3000:]}"
        )
    # The consumer's own targets ran through the rules' actions.
    assert result.labels("TorchExport") == ["//keywords:keyword_net_ep"]
    assert result.labels("ExecuTorchLower") == ["//keywords:keyword_net_pte"]
    # The exporter ran from the external repository, not from a copy in the consumer.
    (export,) = result.executed("TorchExport")
    assert "external/rules_torch_export/exporter/main.py" in export["commandArgs"]


def test_manifests_name_the_consumer_targets(consumer):
    pte = json.loads(consumer.read("bazel-bin/keywords/keyword_net_pte.pte.json"))
    assert pte["label"] == "//keywords:keyword_net_pte"
    assert pte["exported"]["label"] == "//keywords:keyword_net_ep"
    assert pte["pte"]["sha256"] == consumer.sha256("bazel-bin/keywords/keyword_net_pte.pte")
    info = json.loads(consumer.read("bazel-bin/keywords/keyword_net_info.json"))
    assert info["shape_spec"] == "//keywords:mfcc_clips"


def test_a_bad_entry_names_the_consumer_target_and_the_fix(consumer):
    build = consumer.read("keywords/BUILD")
    broken = build.replace('entry = "keywords.keyword_net:keyword_net"', 'entry = "keywords.keyword_net:keyword_nett"')
    assert broken != build
    consumer.write("keywords/BUILD", broken)
    try:
        result = consumer.bazel("build", "//keywords:keyword_net_ep")
    finally:
        consumer.write("keywords/BUILD", build)
    assert result.code != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR: //keywords:keyword_net_ep")]
    assert errors, result.stderr[-3000:]
    assert "'keyword_nett'" in errors[0] and "set `entry` to one of its callables: KeywordNet" in errors[0], errors[0]
    assert "Traceback" not in result.stderr
