"""//models/custom_op:custom_op_ep keeps zoo::clipped_swish as an operator, needs the op's
library to load, and computes what the eager model computes."""

import subprocess
import sys

import pytest
import torch
from runfiles import Runfiles

from models.custom_op.swish_net import swish_net

PT2 = "rules_torch_export/models/custom_op/custom_op_ep.pt2"


@pytest.fixture(scope="module")
def pt2_path():
    return Runfiles.Create().Rlocation(PT2)


def test_op_survives_export(pt2_path):
    ep = torch.export.load(pt2_path)  # swish_net's import registered the op
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert targets.count("zoo.clipped_swish.default") == 2, targets


@pytest.mark.parametrize("batch", [1, 3, 16])
def test_exported_module_matches_eager(pt2_path, batch):
    x = 3 * torch.randn(batch, 3, 64, 64, generator=torch.Generator().manual_seed(batch))
    with torch.no_grad():
        torch.testing.assert_close(torch.export.load(pt2_path).module()(x), swish_net()(x))


def test_loading_without_the_op_library_fails(pt2_path):
    # Why the .pte is lowered from the decomposed export: a process that has not imported
    # models.common.ops cannot even load this .pt2.
    code = "import sys, torch; torch.export.load(sys.argv[1])"
    done = subprocess.run([sys.executable, "-c", code, pt2_path], capture_output=True, text=True)
    assert done.returncode != 0
    assert "zoo.clipped_swish" in done.stderr
