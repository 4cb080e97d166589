"""graph_snapshot_test end to end: a model change fails the test; `.update` makes it pass."""

import os

import pytest

from tests.e2e import harness

MODEL = '''"""A two-layer MLP whose hidden width the test changes."""

import torch
from torch import nn


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, {hidden}), nn.ReLU(), nn.Linear({hidden}, 2)).eval()
'''

BUILD = '''load("//rules:defs.bzl", "dim", "graph_snapshot_test", "graph_snapshot_updates",
     "shape_spec", "tensor", "torch_export", "torch_model")

package(default_visibility = ["//visibility:public"])

torch_model(name = "mlp", srcs = ["__init__.py", "model.py"], entry = "tiny.model:mlp")

shape_spec(
    name = "rows",
    inputs = {"input": tensor(["batch", 4])},
    dims = {"batch": dim(min = 1, max = 16)},
)

torch_export(name = "mlp_ep", model = ":mlp", shapes = ":rows")

graph_snapshot_test(name = "graph_test", exported = ":mlp_ep", golden = "mlp.graph.txt")

graph_snapshot_updates(name = "update_goldens", tests = [":graph_test"])
'''


def _set_hidden(ws, hidden):
    ws.write("tiny/model.py", MODEL.format(hidden=hidden))


def _test(ws):
    """Runs the snapshot test; returns (exit code, the test's log)."""
    result = ws.bazel("test", "//tiny:graph_test")
    log_path = os.path.join(ws.path, "bazel-testlogs/tiny/graph_test/test.log")
    log = open(log_path, encoding="utf-8").read() if os.path.exists(log_path) else result.stderr
    return result.code, log


@pytest.fixture(scope="module")
def ws():
    with harness.Workspace.create("downstream") as workspace:
        workspace.write("tiny/__init__.py", "")
        workspace.write("tiny/BUILD", BUILD)
        _set_hidden(workspace, 8)
        yield workspace


def test_missing_golden_fails_with_the_update_command(ws):
    code, log = _test(ws)
    assert code == 3, log  # 3: the build worked, the test failed
    assert "the golden tiny/mlp.graph.txt does not exist" in log
    assert "bazel run //tiny:graph_test.update" in log


def test_update_writes_the_golden_and_the_test_passes(ws):
    ws.bazel("run", "//tiny:graph_test.update").check()
    golden = ws.read("tiny/mlp.graph.txt")
    assert golden.startswith("# rules_torch_export graph snapshot of //tiny:mlp_ep\n")
    assert "user_input %input: float32[batch, 4]" in golden
    assert ws.path not in golden  # no absolute path of the workspace
    code, log = _test(ws)
    assert code == 0, log


def test_a_model_change_fails_with_a_diff_until_updated(ws):
    _set_hidden(ws, 5)
    code, log = _test(ws)
    assert code == 3, log
    assert "differs from tiny/mlp.graph.txt" in log
    assert "-parameter %p_0_weight 0.weight: float32[8, 4]" in log
    assert "+parameter %p_0_weight 0.weight: float32[5, 4]" in log
    assert "accept it with:\n  bazel run //tiny:graph_test.update" in log
    ws.bazel("run", "//tiny:graph_test_update").check()  # the underscore alias
    assert "float32[5, 4]" in ws.read("tiny/mlp.graph.txt")
    code, log = _test(ws)
    assert code == 0, log


def test_bulk_update_rewrites_every_golden(ws):
    _set_hidden(ws, 6)
    assert _test(ws)[0] == 3
    result = ws.bazel("run", "//tiny:update_goldens").check()
    assert "wrote tiny/mlp.graph.txt" in result.stdout
    assert _test(ws)[0] == 0


def test_other_versions_in_the_golden_are_named_first(ws):
    golden = ws.read("tiny/mlp.graph.txt")
    lines = golden.splitlines(keepends=True)
    assert lines[1].startswith("# versions: ")
    lines[1] = "# versions: executorch==0.1.0 torch==2.0.0\n"
    ws.write("tiny/mlp.graph.txt", "".join(lines))
    code, log = _test(ws)
    assert code == 3, log
    message = log[log.index("The golden was written with"):]
    assert message.startswith("The golden was written with executorch 0.1.0, torch 2.0.0; this toolchain has")
    assert message.index("The golden was written") < message.index("FAIL //tiny:graph_test")


BAD_BUILD = '''load("//rules:defs.bzl", "executorch_program", "graph_snapshot_test", "numerics_test")

executorch_program(name = "mlp_pte", exported = "//tiny:mlp_ep", backends = [])

{rule}
'''


@pytest.mark.parametrize("rule, message", [
    ('graph_snapshot_test(name = "t", golden = "g.txt")',
     'graph_snapshot_test //bad:t: set exactly one of exported = ":<torch_export>" or program = ":<executorch_program>"'),
    ('numerics_test(name = "t", program = ":mlp_pte", inputs = [{"batch": 99}])',
     "numerics_test //bad:t: inputs[0][\"batch\"] = 99 is outside the dim's range [1, 16]; pick a size inside it"),
    ('numerics_test(name = "t", program = ":mlp_pte", inputs = [{"rows": 2}])',
     "numerics_test //bad:t: inputs[0] names dim \"rows\", which shape_spec //tiny:rows does not declare"),
])
def test_bad_attributes_fail_at_analysis_with_the_fix(ws, rule, message):
    ws.write("bad/BUILD", BAD_BUILD.format(rule=rule))
    result = ws.bazel("build", "--nobuild", "//bad:all")
    assert result.code != 0
    assert message in result.stderr, result.stderr
