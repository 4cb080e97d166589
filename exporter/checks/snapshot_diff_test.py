"""The visual diff of a graph snapshot: nodes matched by what they compute, marked, laid out."""

import os

from runfiles import Runfiles

from exporter.checks import golden, snapshot_diff

GOLDEN = """# rules_torch_export graph snapshot of //t:t_ep

== inputs
parameter %p_w w: float32[4, 4]
user_input %x: float32[batch, 4]

== graph
%linear = aten.linear.default(%x, %p_w) -> float32[batch, 4]
%tanh = aten.tanh.default(%linear) -> float32[batch, 4]
%add = aten.add.Tensor(%tanh, %x) -> float32[batch, 4]
return (%add,)
"""

# A relu inserted before the linear, and the tanh now a sigmoid: %add keeps its name, and reads
# a changed node.
ACTUAL = GOLDEN.replace("%linear = aten.linear.default(%x,", "%relu = aten.relu.default(%x) -> float32[batch, 4]\n"
                        "%linear = aten.linear.default(%relu,").replace("aten.tanh.default", "aten.sigmoid.default")


def _dot():
    return Runfiles.Create().Rlocation("graphviz/dot.sh")


def test_parse_reads_nodes_inputs_and_the_return():
    nodes = snapshot_diff.parse(GOLDEN)["graph"]
    assert [(n["name"], n["op"], n["args"]) for n in nodes] == [
        ("x", "input", []), ("linear", "aten.linear.default", ["x", "p_w"]),
        ("tanh", "aten.tanh.default", ["linear"]), ("add", "aten.add.Tensor", ["tanh", "x"]),
        ("output", "output", ["add"])]


def test_match_marks_added_removed_and_changed_nodes():
    old, new = snapshot_diff.parse(GOLDEN)["graph"], snapshot_diff.parse(ACTUAL)["graph"]
    old_status, new_status = snapshot_diff.match(old, new)
    assert {k: v for k, v in old_status.items() if v != "same"} == {
        "linear": "changed", "tanh": "removed", "add": "changed"}
    assert {k: v for k, v in new_status.items() if v != "same"} == {
        "relu": "added", "linear": "changed", "tanh": "added", "add": "changed"}


def test_renumbered_nodes_that_compute_the_same_are_the_same():
    renamed = GOLDEN.replace("%tanh", "%tanh_7")
    old_status, new_status = snapshot_diff.match(snapshot_diff.parse(GOLDEN)["graph"],
                                                 snapshot_diff.parse(renamed)["graph"])
    assert set(old_status.values()) == {"same"} and set(new_status.values()) == {"same"}


def test_the_page_shows_both_graphs_with_marked_nodes_and_the_text_diff():
    page = snapshot_diff.render(GOLDEN, ACTUAL, "//t:graph_test", "t/t.graph.txt", _dot(), "graphviz test")
    assert page.count("<svg") == 2
    assert 'id="actual0&#45;relu" class="node mark"' in page  # dot writes - as &#45;
    assert 'id="golden0&#45;x" class="node"' in page
    assert '<span class="a">+%relu = aten.relu.default(%x) -&gt; float32[batch, 4]</span>' in page
    assert snapshot_diff.render(GOLDEN, ACTUAL, "//t:graph_test", "t/t.graph.txt", _dot(), "graphviz test") == page


def test_a_hostile_name_stays_text():
    hostile = ACTUAL.replace("%relu", "%relu</script><script>alert(1)</script>")
    page = snapshot_diff.render(GOLDEN, hostile, "//t:graph_test", "t/t.graph.txt", _dot(), "graphviz test")
    assert "<script>alert(1)" not in page


def test_outputs_path_names_the_file_under_bazel_testlogs():
    assert golden.outputs_path("//models/gru:gru_graph_test", "g.diff.html") == \
        "bazel-testlogs/models/gru/gru_graph_test/test.outputs/g.diff.html"
    assert os.path.basename(golden.outputs_path("@r//a:b", "x")) == "x"
