"""//models:zoo_selected_ops is the union of every zoo program's selected operators: each
program's operators and kernel keys (dtypes, dim orders) are in it, under the program's label,
and it holds nothing else."""

import glob
import json
import os

import yaml
from runfiles import Runfiles

RUNFILES = Runfiles.Create()


def _load(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def _programs():
    """{label: selected-operators data} of every zoo program in the runfiles."""
    root = os.path.dirname(RUNFILES.Rlocation("rules_torch_export/models/zoo_selected_ops.selected_operators.yaml"))
    found = {}
    for path in glob.glob(os.path.join(root, "**", "*.selected_operators.yaml"), recursive=True):
        if os.path.basename(path).startswith("zoo_selected_ops."):
            continue
        package = os.path.relpath(os.path.dirname(path), os.path.dirname(root))
        found["//{}:{}".format(package, os.path.basename(path)[: -len(".selected_operators.yaml")])] = _load(path)
    return found


def test_every_program_is_in_the_merged_list():
    merged = _load(RUNFILES.Rlocation("rules_torch_export/models/zoo_selected_ops.selected_operators.yaml"))
    programs = _programs()
    assert len(programs) == 20, sorted(programs)
    union = set()
    for label, data in programs.items():
        for op, keys in data["et_kernel_metadata"].items():
            assert label in merged["operators"][op]["debug_info"], (label, op)
            assert set(keys) <= set(merged["et_kernel_metadata"][op]), (label, op)
        union |= set(data["operators"])
    assert set(merged["operators"]) == union
    assert merged["include_all_operators"] is False


def test_the_manifest_lists_programs_and_operators():
    with open(RUNFILES.Rlocation("rules_torch_export/models/zoo_selected_ops.selected_operators.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    assert manifest["label"] == "//models:zoo_selected_ops"
    assert manifest["programs"] == sorted(_programs())
    assert "aten::avg_pool3d.out" in manifest["operators"]  # the volumetric model's own kernel
