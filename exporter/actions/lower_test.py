"""The ExecuTorchLower action in-process: its errors name the exports they are about."""

import pytest
import torch

from exporter.actions import lower, registry
from exporter.core.errors import UserError
from exporter.formats import pt2


@torch.library.custom_op("lower_test::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@twice.register_fake
def _(x):
    return torch.empty_like(x)


class CallsTwice(torch.nn.Module):
    def forward(self, x):
        return torch.ops.lower_test.twice(x) + 1


def _pt2(tmp_path, name):
    path = str(tmp_path / f"{name}.pt2")
    pt2.save(torch.export.export(CallsTwice(), (torch.randn(2, 3),)), path)
    return path


def _method(tmp_path, name):
    return {"exported_label": f"//t:{name}_ep", "pt2": _pt2(tmp_path, name), "spec_label": None, "spec": None}


def test_a_failed_program_of_several_methods_names_every_export(tmp_path):
    (tmp_path / "identity.txt").write_text("python 3\n")
    config = registry.LowerConfig.from_json({
        "label": "//t:program", "identity": str(tmp_path / "identity.txt"), "backends": [],
        "methods": {"forward": _method(tmp_path, "a"), "other": _method(tmp_path, "b")},
        "outputs": {"pte": str(tmp_path / "p.pte"), "manifest": str(tmp_path / "p.pte.json")},
    })
    with pytest.raises(UserError) as error:
        lower.lowered(config)
    message = str(error.value)
    assert "no kernel for lower_test.twice" in message, message
    assert "ExecuTorch lowering of //t:a_ep, //t:b_ep for portable failed" in message, message
