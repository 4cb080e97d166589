"""Runs the exporter's export path in-process, the way the TorchExport action does, for tests."""

import json
import os

import torch

from exporter.actions import export, registry


def tensor(shape, dtype="float32", hints=None, fill=None):
    """A spec tensor NODE (the JSON that shape_spec writes)."""
    node = {"shape": list(shape), "dtype": dtype, "fill": fill}
    if hints is not None:
        node["hints"] = list(hints)
    return {"tensor": node}


def config_for(tmp_path, entry, inputs, dims=None, **options):
    """An export config like the one torch_export writes; outputs go under tmp_path."""
    identity = tmp_path / "identity.txt"
    identity.write_text(f"python 3\ntorch=={torch.__version__}\n")
    config = {
        "label": "//test:ep",
        "model": {"label": "//test:model", "entry": entry, "init_args": {}, "srcs": [],
                  "import_roots": ["."], "checkpoint": None},
        "spec_label": "//test:spec",
        "spec": {"dims": dims or {}, "inputs": [{"name": k, "value": v} for k, v in inputs.items()]},
        "identity": str(identity),
        "outputs": {"pt2": str(tmp_path / "ep.pt2"), "manifest": str(tmp_path / "ep.pt2.json")},
    }
    config.update(options)
    return config


def run_export(config):
    """Runs export.run on the config (its JSON form); returns the manifest it wrote."""
    export.run(registry.ExportConfig.from_json(config))
    with open(config["outputs"]["manifest"], encoding="utf-8") as f:
        return json.load(f)


def dims_by_axis(manifest):
    """{(input path, axis): dims record} from a .pt2.json manifest."""
    return {(d["input"], d["axis"]): d for d in manifest["dims"]}


def load_pt2(config):
    return torch.export.load(config["outputs"]["pt2"])


def has_output(config):
    return os.path.exists(config["outputs"]["pt2"])
