"""Smoke test of the harness: a copied workspace builds a tiny model with the real Bazel."""

import json

from tests.e2e import harness

_BUILD = """
load("//rules:defs.bzl", "dim", "executorch_program", "shape_spec", "tensor", "torch_export", "torch_model")

torch_model(name = "mlp", srcs = ["__init__.py", "mlp.py"], entry = "zoo.mlp:Mlp")
shape_spec(name = "vec", inputs = {"x": tensor(["batch", 8])}, dims = {"batch": dim(min = 1, max = 16)})
torch_export(name = "mlp_ep", model = ":mlp", shapes = ":vec")
executorch_program(name = "mlp_pte", exported = ":mlp_ep", backends = [])
"""

_MLP = """
import torch

class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.layer(x))
"""


def test_builds_a_tiny_model_in_a_copied_workspace():
    with harness.Workspace.create("smoke") as ws:
        ws.write("zoo/BUILD", _BUILD)
        ws.write("zoo/__init__.py", "")
        ws.write("zoo/mlp.py", _MLP)
        result = ws.build("//zoo:mlp_pte")
        assert result.labels("TorchExport") == ["//zoo:mlp_ep"]
        assert result.labels("ExecuTorchLower") == ["//zoo:mlp_pte"]
        manifest = json.loads(ws.read("bazel-bin/zoo/mlp_pte.pte.json"))
        assert manifest["pte"]["sha256"] == ws.sha256("bazel-bin/zoo/mlp_pte.pte")
