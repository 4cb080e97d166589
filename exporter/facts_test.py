"""exporter_facts.bzl is what the exporter's Python defines: the rules' copy of the registry of
actions (command, mnemonic, worker), the shape_spec dtypes and hints, backends, IRs, quantizers,
schemes, kernel libraries and the actions' math environment."""

import ast

from runfiles import Runfiles

from exporter import facts
from exporter.actions import registry

PATH = Runfiles.Create().Rlocation("rules_torch_export/exporter/exporter_facts.bzl")


def test_the_committed_file_is_current():
    with open(PATH, encoding="utf-8") as f:
        committed = f.read()
    assert committed == facts.render(), "exporter/exporter_facts.bzl is stale: bazel run //exporter:update_exporter_facts"


def test_the_file_holds_every_action_with_its_mnemonic():
    with open(PATH, encoding="utf-8") as f:
        tree = ast.parse(f.read())  # the file is Starlark that Python can parse too
    values = {node.targets[0].id: ast.literal_eval(node.value)
              for node in tree.body if isinstance(node, ast.Assign)}
    assert values["EXPORTER_ACTIONS"]["export"] == {"mnemonic": "TorchExport", "worker": True}
    assert values["EXPORTER_ACTIONS"]["etrecord"]["mnemonic"] == "ExecuTorchETRecord"
    assert set(values["EXPORTER_ACTIONS"]) == set(registry.ACTIONS)
    assert values["HINTS"] == ["AUTO", "DYNAMIC", "STATIC"]
