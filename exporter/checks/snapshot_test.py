"""The snapshot text and the golden runner (check, update, messages) on a real exported program."""

import json
import re

import pytest
import torch

from exporter.checks import contract, golden, snapshot
from exporter.tests.tiny_model import tiny

PT2 = "exporter/tests/tiny_ep.pt2"
PTE = "exporter/tests/tiny_xnnpack_pte.pte"
SPEC = {
    "dims": {"batch": {"min": 1, "max": 8, "example": 2}},
    "inputs": [
        {"name": "x", "value": {"tensor": {"shape": ["batch", 4], "dtype": "float32"}}},
        {"name": "y", "value": {"tensor": {"shape": ["batch"], "dtype": "int64"}}},
    ],
}


def _export(model):
    batch = torch.export.Dim("batch", min=1, max=8)
    args = (torch.randn(2, 4), torch.arange(2))
    return torch.export.export(model, args, dynamic_shapes={"x": {0: batch}, "y": {0: batch}})


@pytest.fixture(scope="module")
def text():
    return snapshot.render("//exporter/tests:tiny_ep", torch.export.load(PT2), SPEC)


def test_text_names_signature_shapes_ranges_and_nodes(text):
    assert text.startswith("# rules_torch_export graph snapshot of //exporter/tests:tiny_ep\n")
    assert f"torch=={snapshot.versions()['torch']}" in text.splitlines()[1]
    assert "parameter %p_fc_weight fc.weight: float32[3, 4]" in text
    assert "buffer %b_scale scale: float32[3]" in text
    assert "user_input %x: float32[batch, 4]" in text
    assert "user_input %y: int64[batch]" in text
    assert "batch: [1, 8]" in text
    assert re.search(r"^%linear = aten\.linear\.default\(%x, %p_fc_weight, %p_fc_bias\) -> float32\[batch, 3\]$",
                     text, re.M)
    assert re.search(r"^return \(%mul, %add\)$", text, re.M)


def test_text_holds_no_weights_paths_addresses_or_torch_symbols(text):
    assert not re.search(r"0x[0-9a-f]{4,}", text)
    assert not re.search(r"\bs\d+\b", text)  # torch's s77 became "batch"
    assert "/" not in text.replace("//exporter/tests:tiny_ep", "")
    assert "tensor(" not in text and "Parameter" not in text  # shapes, never values


def test_same_model_exported_again_gives_the_same_text(text):
    fresh = snapshot.render("//exporter/tests:tiny_ep", _export(tiny()), SPEC)
    assert fresh == text


def test_a_changed_model_changes_the_text(text):
    changed = snapshot.render("//exporter/tests:tiny_ep", _export(tiny(classes=5)), SPEC)
    assert changed != text
    assert "float32[batch, 5]" in changed


def test_without_a_spec_symbols_get_canonical_names():
    plain = snapshot.render("//t:ep", torch.export.load(PT2), None)
    assert "user_input %x: float32[sym0, 4]" in plain
    assert "sym0: [1, 8]" in plain


def test_program_section_lists_the_plan():
    with open(PTE, "rb") as f:
        text = snapshot.render("//t:pte", torch.export.load(PT2), SPEC, f.read())
    section = text[text.index("== program method forward"):]
    assert "input 0: tensor float32[8, 4]" in section
    assert "delegate XnnpackBackend" in section
    assert "kernel aten::add.out" in section  # y + 1 stays in the portable kernels


def _config(tmp_path, golden_path):
    return {
        "label": "//t:snap", "subject": "//exporter/tests:tiny_ep", "pt2": PT2, "pte": None,
        "spec": SPEC, "golden": str(golden_path), "update_target": "//t:snap.update",
    }


def _check(data):
    """golden.run on the config the rule would write as data."""
    return golden.run(contract.SnapshotConfig.from_json(data))


def test_missing_golden_fails_with_the_update_command(tmp_path):
    ok, message = _check(_config(tmp_path, tmp_path / "g.txt"))
    assert not ok
    assert "does not exist" in message and "bazel run //t:snap.update" in message


def test_mismatch_shows_a_diff_and_the_command(tmp_path, text):
    path = tmp_path / "g.txt"
    path.write_text(text.replace("float32[3, 4]", "float32[3, 9]"))
    ok, message = _check(_config(tmp_path, path))
    assert not ok
    assert message.startswith("FAIL //t:snap")
    assert "-parameter %p_fc_weight fc.weight: float32[3, 9]" in message
    assert "+parameter %p_fc_weight fc.weight: float32[3, 4]" in message
    assert message.rstrip().endswith("bazel run //t:snap.update")
    path.write_text(text)
    assert _check(_config(tmp_path, path))[0]


def test_other_versions_in_the_header_are_named_first(tmp_path, text):
    path = tmp_path / "g.txt"
    old = text.replace(snapshot.format_versions(snapshot.versions()),
                       "# versions: executorch==0.9.0 torch==2.11.0")
    path.write_text(old.replace("float32[3, 4]", "float32[3, 9]"))
    ok, message = _check(_config(tmp_path, path))
    assert not ok
    first = message.splitlines()[0]
    assert first.startswith("The golden was written with executorch 0.9.0, torch 2.11.0;")
    assert f"this toolchain has executorch {snapshot.versions()['executorch']}" in first


def test_update_writes_into_the_workspace_and_then_the_test_passes(tmp_path, monkeypatch, capsys):
    config = _config(tmp_path, "pkg/tiny.graph.txt")
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(config))
    monkeypatch.delenv("BUILD_WORKSPACE_DIRECTORY", raising=False)
    assert golden.main(["--update", str(config_path)]) == 2  # not under `bazel run`
    monkeypatch.setenv("BUILD_WORKSPACE_DIRECTORY", str(tmp_path))
    assert golden.main(["--update", str(config_path)]) == 0
    assert "wrote pkg/tiny.graph.txt" in capsys.readouterr().out
    assert golden.main(["--update", str(config_path)]) == 0
    assert "unchanged pkg/tiny.graph.txt" in capsys.readouterr().out
    config["golden"] = str(tmp_path / "pkg/tiny.graph.txt")
    assert _check(config)[0]


class _Nested(torch.nn.Module):
    def forward(self, x, ys):
        return x.sum() + ys[0].sum() * ys[1].sum()


def test_symbols_are_named_through_nested_inputs_and_derived_dims():
    seq = torch.export.Dim("seq", min=2, max=8)
    ep = torch.export.export(_Nested(), (torch.randn(4), [torch.randn(2), torch.randn(3)]),
                             dynamic_shapes={"x": {0: 2 * seq}, "ys": [{0: seq}, None]})
    spec = {"dims": {"seq": {"min": 2, "max": 8, "example": 2}},
            "inputs": [{"name": "ys", "value": {"list": [{"tensor": {"shape": ["seq"], "dtype": "float32"}},
                                                         {"tensor": {"shape": [3], "dtype": "float32"}}]}},
                       {"name": "x", "value": {"tensor": {"shape": ["2*seq"], "dtype": "float32"}}}]}
    text = snapshot.render("//t:nested", ep, spec)
    assert "user_input %x: float32[2*seq]" in text
    assert "user_input %ys_0: float32[seq]" in text and "user_input %ys_1: float32[3]" in text
    assert "seq: [2, 8]" in text
