"""formats/pt2.py: what a written .pt2 leaves out, and the repair a loaded one needs."""

import os
import subprocess
import sys
import zipfile

import pytest
import torch

from exporter.actions import lower
from exporter.formats import pt2


class Named(torch.nn.Module):
    """The torch.export tutorial's model: y has twice x's rows."""

    def forward(self, x, y):
        return torch.cat([x, x], 0).sum(1) + y.sum(1)


def _named_program():
    dx = torch.export.Dim("dx", min=4, max=256)
    dh = torch.export.Dim("dh", max=512)
    return torch.export.export(Named(), (torch.randn(4, 3), torch.randn(8, 5)),
                               dynamic_shapes=({0: dx}, {0: 2 * dx, 1: dh}))


def test_a_loaded_program_with_a_derived_dim_lowers(tmp_path):
    path = str(tmp_path / "named.pt2")
    pt2.save(_named_program(), path)
    ep = pt2.load(path)
    assert "2*s" in " ".join(str(k) for k in ep.range_constraints)  # the .pt2 keeps the derived range
    program, _ = lower.lower(ep, [])
    assert program.buffer[4:8] == b"ET12"


def test_torch_alone_still_fails_on_the_round_trip(tmp_path):
    """The bug pt2.load repairs. If torch fixes it, this fails: then drop the repair."""
    path = str(tmp_path / "named.pt2")
    pt2.save(_named_program(), path)
    with pytest.raises(AssertionError, match="expected sympy.Symbol"):
        lower.lower(torch.export.load(path), [])


# Both programs carry process-specific ids in memory: decompositions record provenance
# ("from_node", with graph ids), strict export keys nn_module_stack by id(module).
_WRITE = """
import sys, torch
from exporter.formats import pt2
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU())
if sys.argv[2] == "decomposed":
    ep = torch.export.export(model, (torch.randn(2, 4),)).run_decompositions({})
    assert any("from_node" in n.meta for n in ep.graph.nodes)
else:
    ep = torch.export.export(model, (torch.randn(2, 4),), strict=True)
    assert any(k.isdigit() for n in ep.graph.nodes for k in n.meta.get("nn_module_stack", {}))
pt2.save(ep, sys.argv[1])
"""


@pytest.mark.parametrize("kind", ["decomposed", "strict"])
def test_the_same_program_gives_the_same_bytes_in_two_processes(tmp_path, kind):
    paths = [str(tmp_path / folder / "program.pt2") for folder in ("a", "b")]  # the name is in the bytes
    for path in paths:
        os.makedirs(os.path.dirname(path))
        subprocess.run([sys.executable, "-c", _WRITE, path, kind], check=True)
    contents = [open(p, "rb").read() for p in paths]
    assert contents[0] == contents[1]
    with zipfile.ZipFile(paths[0]) as archive:
        model_json = next(archive.read(n) for n in archive.namelist() if n.endswith("models/model.json"))
    for key in (b"from_node", b"graph_id", b"stack_trace"):
        assert key not in model_json
    assert b"L__self__0" in model_json  # the Linear's entry, keyed by its path


_WRITE_CUSTOM_OP = """
import sys, torch
torch.library.define("pt2_test::double", "(Tensor x) -> Tensor")
torch.library.impl("pt2_test::double", "CompositeExplicitAutograd")(lambda x: x * 2)
torch.library.register_fake("pt2_test::double")(lambda x: torch.empty_like(x))
class M(torch.nn.Module):
    def forward(self, x):
        return torch.ops.pt2_test.double(x) + 1
torch.export.save(torch.export.export(M(), (torch.randn(3),)), sys.argv[1])
"""


def test_unresolved_operators_names_custom_ops_this_process_lacks(tmp_path):
    path = str(tmp_path / "op.pt2")
    subprocess.run([sys.executable, "-c", _WRITE_CUSTOM_OP, path], check=True)
    assert pt2.unresolved_operators(path) == ["pt2_test.double.default"]
    with pytest.raises(RuntimeError):
        pt2.load(path)


def test_unresolved_operators_is_empty_for_aten_programs(tmp_path):
    path = str(tmp_path / "named.pt2")
    pt2.save(_named_program(), path)
    assert pt2.unresolved_operators(path) == []
