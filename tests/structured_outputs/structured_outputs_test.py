"""Programs of models with structured outputs: their manifests name the outputs by their keys,
and a fresh process loads the .pt2 and runs the .pte without importing the model's module or
transformers (a file in the cache never decides what a tool imports)."""

import json
import os
import subprocess
import sys

import pytest
from runfiles import Runfiles

_RUNFILES = Runfiles.Create()

# name -> (output names, containers the export rewrote as dicts)
EXPECTED = {
    "named_tuple": (["logits", "features"], ["tests.structured_outputs.structured.Scores"]),
    "dataclass": (["boxes", "scores"], ["tests.structured_outputs.structured.Detections"]),
    "nested_dict": (["logits", "extra.features", "extra.norm"], None),
    "bert_mlm": (["logits"], ["transformers.modeling_outputs.MaskedLMOutput"]),
}


def _path(name):
    return _RUNFILES.Rlocation(f"rules_torch_export/tests/structured_outputs/{name}")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_manifest_names_the_outputs(name):
    with open(_path(f"{name}_ep.pt2.json"), encoding="utf-8") as f:
        record = json.load(f)["outputs"]
    names, containers = EXPECTED[name]
    assert record["names"] == names
    assert record.get("containers") == containers


def test_the_report_graph_names_the_outputs_by_their_keys():
    with open(_path("nested_dict_pte.program_graph.json"), encoding="utf-8") as f:
        graph = json.load(f)
    names = []

    def collect(value):
        if isinstance(value, dict):
            if value.get("kind") == "output":
                names.append(value["name"])
            for item in value.values():
                collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)

    collect(graph)
    assert names == EXPECTED["nested_dict"][0]


# Runs in a fresh interpreter, one for every program (each import of torch and ExecuTorch costs
# seconds): for each pair of arguments, loads the .pt2 with the exporter's reader, calls the
# program, runs the .pte, and prints a line of what it found and which forbidden modules the
# process has imported by then (so a later program's line includes what an earlier one imported).
_PROBE = """
import json, sys
import torch
from executorch.runtime import Runtime
from exporter.formats import pt2
for pt2_path, pte_path in zip(sys.argv[1::2], sys.argv[2::2]):
    ep = pt2.load(pt2_path)
    args, kwargs = ep.example_inputs
    out = ep.module()(*args, **kwargs)
    flat = torch.utils._pytree.tree_leaves((args, kwargs))
    ran = Runtime.get().load_program(pte_path).load_method("forward").execute(flat)
    forbidden = [m for m in sys.modules if m.startswith(("transformers", "tests.structured_outputs"))]
    print(json.dumps({"pte": pte_path, "container": type(out).__name__, "outputs": len(ran), "forbidden": forbidden}),
          flush=True)
"""


@pytest.fixture(scope="module")
def loaded():
    """(the probe's finished process, {.pte path: what the probe found for that program})."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    programs = [_path(f"{name}_{kind}") for name in sorted(EXPECTED) for kind in ("ep.pt2", "pte.pte")]
    result = subprocess.run([sys.executable, "-c", _PROBE, *programs], capture_output=True, text=True, env=env,
                            check=False)
    found = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return result, {record["pte"]: record for record in found}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_program_loads_without_the_model_classes(loaded, name):
    result, by_program = loaded
    assert result.returncode == 0, result.stderr[-2000:]
    found = by_program[_path(f"{name}_pte.pte")]
    assert found["forbidden"] == []
    assert found["container"] == "dict"
    assert found["outputs"] == len(EXPECTED[name][0])
