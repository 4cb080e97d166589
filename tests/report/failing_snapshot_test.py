"""A failing graph_snapshot_test writes the graphs side by side into its undeclared outputs and
names the file: the golden runner on the real config of //models/gru:gru_graph_test (its .pt2,
@graphviz's dot and version), against a copy of its golden made stale here, as `bazel test`
runs it."""

import dataclasses
import os
import re

from exporter.checks import contract, golden

CONFIG = "models/gru/gru_graph_test.config.json"


def _stale(config, tmp_path):
    """The config with a golden that differs from the program: its first linear layer is a matmul
    in the golden."""
    text = golden.render(config)
    assert "%linear = aten.linear.default(" in text
    stale = text.replace("aten.linear.default", "aten.matmul.default", 1)
    path = tmp_path / "gru.graph.txt"
    path.write_text(stale)
    return dataclasses.replace(config, golden=str(path))


def test_a_failing_snapshot_writes_the_visual_diff_and_names_it(tmp_path):
    config = contract.load(CONFIG, contract.SnapshotConfig)
    assert config.dot and config.dot_version  # the rule passes graphviz
    ok, message = golden.run(_stale(config, tmp_path))
    assert not ok
    outputs = os.environ["TEST_UNDECLARED_OUTPUTS_DIR"]
    named = re.search(r"side by side, changes marked: (\S+)", message)
    assert named, message
    assert named.group(1) == "bazel-testlogs/models/gru/gru_graph_test/test.outputs/gru.graph.txt.diff.html"
    page = open(os.path.join(outputs, "gru.graph.txt.diff.html"), encoding="utf-8").read()
    assert page.count("<svg") >= 2  # the golden's graph and the actual one
    assert "aten.matmul" in page and "aten.linear" in page
    changed = re.findall(r"(\d+) changed", page)  # the linear node, on both sides (and what reads it)
    assert len(changed) == 2 and all(int(n) >= 1 for n in changed), changed
    assert "-%linear = aten.matmul.default" in message  # the text diff follows


def test_without_graphviz_the_text_diff_still_fails_the_test(tmp_path):
    config = dataclasses.replace(contract.load(CONFIG, contract.SnapshotConfig), dot=None)
    ok, message = golden.run(_stale(config, tmp_path))
    assert not ok and "side by side" not in message and "-%linear = aten.matmul.default" in message
