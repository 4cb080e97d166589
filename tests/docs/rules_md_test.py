"""docs/rules.md is what tools/docgen generates from the .bzl files, and nothing public lacks a doc."""

import os
import shutil

import pytest

from tools.docgen import bzl_docs, rules_md

# The test runs in its runfiles tree, which holds the sources at their workspace paths.
ROOT = os.getcwd()


def test_rules_md_is_current():
    text, problems = rules_md.render(ROOT)
    assert problems == []
    with open(os.path.join(ROOT, rules_md.OUTPUT), encoding="utf-8") as f:
        assert f.read() == text, f"docs/rules.md is stale; run: {rules_md.UPDATE_COMMAND}"


def test_every_public_name_of_defs_bzl_is_documented():
    _, entries = bzl_docs.public_api(ROOT)
    with open(os.path.join(ROOT, rules_md.OUTPUT), encoding="utf-8") as f:
        text = f.read()
    names = {e.name for e in entries}
    # The core of the API, so that a parser bug that drops names cannot pass unnoticed.
    assert {"torch_model", "shape_spec", "tensor", "dim", "torch_export", "executorch_program",
            "TorchModelInfo", "ExecuTorchProgramInfo", "AUTO"} <= names
    for entry in entries:
        assert f"### `{entry.name}`" in text
        for param in entry.params:
            assert f"| `{param.name}` |" in text, f"{entry.name}.{param.name} is missing from docs/rules.md"


@pytest.fixture
def tree(tmp_path):
    """A writable copy of the generator's inputs."""
    dest = tmp_path / "src"
    shutil.copytree(ROOT, dest, symlinks=False, ignore=shutil.ignore_patterns("*.runfiles", "__pycache__"))
    return dest


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{path} no longer has {old!r}; update this test"
    path.write_text(text.replace(old, new, 1))


def test_an_attr_without_doc_is_reported(tree):
    # (executorch_program is a macro since it took methods; torch_export is still a plain rule.)
    _edit(tree / "rules/private/torch_export.bzl", 'doc = "The torch_model to export."', "")
    _, problems = rules_md.render(str(tree))
    assert problems == ["rule torch_export: attr model has no doc (rules/private/torch_export.bzl)"]


def test_a_macro_argument_without_doc_is_reported(tree):
    _edit(tree / "rules/private/testing/numerics_test.bzl", "      atol: absolute tolerance;", "      (atol) absolute tolerance;")
    _, problems = rules_md.render(str(tree))
    assert any("macro numerics_test: parameter atol has no doc" in p for p in problems), problems


def test_a_new_attr_makes_the_checked_in_file_stale(tree, capsys):
    _edit(tree / "rules/private/lib/lowering.bzl", '"summary": attr.bool(',
          '"method_name": attr.string(default = "forward", doc = "The method to lower."),\n        "summary": attr.bool(')
    assert rules_md.main(["--root", str(tree), "--check"]) == 1
    err = capsys.readouterr().err
    assert "method_name" in err and rules_md.UPDATE_COMMAND in err
    assert rules_md.main(["--root", str(tree), "--write"]) == 0
    assert rules_md.main(["--root", str(tree), "--check"]) == 0
    assert "| `method_name` | string | `\"forward\"` | The method to lower. |" in (tree / rules_md.OUTPUT).read_text()


def test_values_and_defaults_taken_from_exporter_facts_show_as_values():
    # torch_export's ir and group_size, and llm_program's defaults, come from exporter_facts.bzl.
    text, _ = rules_md.render(ROOT)
    assert '| `ir` | string | `"training"` |' in text
    assert 'One of: `"training"`, `"inference"`, `"core_aten"`.' in text
    assert '| `group_size` | int | `32` | The weights per quantization group' in text
    assert '| `backends` | list | `["xnnpack"]` | as executorch_program\'s' in text


def test_rules_private_shows_what_each_file_is():
    # rules/private/ holds what defs.bzl exports, testing/ the test rules and lib/ the helpers
    # (CONTRIBUTING.md, "Layout"): a file that defs.bzl does not load belongs in lib/ or testing/.
    defs, entries = bzl_docs.public_api(ROOT)
    loaded = {bzl_docs.label_to_path(label, "rules/defs.bzl") for label, _ in defs.loads.values()}
    folder = os.path.join(ROOT, "rules/private")
    assert {f"rules/private/{f}" for f in os.listdir(folder) if f.endswith(".bzl")} <= loaded
    for entry in entries:
        assert not entry.source.startswith("rules/private/lib/"), entry.name
        if entry.name.endswith("_test"):
            assert entry.source.startswith("rules/private/testing/"), entry.name
