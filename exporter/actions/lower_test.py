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


@pytest.mark.parametrize("content", [b"not a zip", b""], ids=["foreign", "empty"])
def test_a_corrupt_pt2_fails_in_one_line_naming_it(tmp_path, content):
    """A .pt2 from a cache may be anything: the lowering says which file and what is wrong."""
    (tmp_path / "identity.txt").write_text("python 3\n")
    bad = tmp_path / "a.pt2"
    bad.write_bytes(content)
    config = registry.LowerConfig.from_json({
        "label": "//t:program", "identity": str(tmp_path / "identity.txt"), "backends": [],
        "methods": {"forward": {"exported_label": "//t:a_ep", "pt2": str(bad), "spec_label": None, "spec": None}},
        "outputs": {"pte": str(tmp_path / "p.pte"), "manifest": str(tmp_path / "p.pte.json")},
    })
    with pytest.raises(UserError) as error:
        lower.lowered(config)
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"{bad}: not a zip archive (a .pt2 is one)"), message
