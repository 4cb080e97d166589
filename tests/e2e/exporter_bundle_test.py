"""Fast tests of exporter/actions/model_bundle.py, the model_bundle action: digest names, index, errors."""

import hashlib
import json
import os

import pytest

from exporter.actions import model_bundle
from exporter.core import manifest


def _program(tmp_path, label, data, kind="pte", recorded=None):
    name = label.split(":")[1]
    path = tmp_path / f"{name}.{kind}"
    path.write_bytes(data)
    digest = recorded or hashlib.sha256(data).hexdigest()
    meta = {
        kind: {"sha256": digest, "size": len(data)},
        "backends": ["xnnpack"],
        "toolchain": {"torch": "2"},
    }
    (tmp_path / f"{name}.{kind}.json").write_text(json.dumps(meta))
    return {"label": label, "kind": kind, "file": str(path), "manifest": str(path) + ".json"}


def _build(out, programs):
    config = {"label": "//app:b", "output": str(out), "programs": programs}
    return model_bundle.build(config, manifest.sha256_file)


def _tree(folder):
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


def test_bundle_names_files_by_digest_and_indexes_every_label(tmp_path):
    a = _program(tmp_path, "//zoo:a_pte", b"program a")
    same = _program(tmp_path, "//zoo:same_pte", b"program a")  # equal bytes, another label
    b = _program(tmp_path, "//zoo:b_ep", b"program b", kind="pt2")
    out = tmp_path / "out"
    index = _build(out, [b, same, a])
    digest_a = hashlib.sha256(b"program a").hexdigest()
    digest_b = hashlib.sha256(b"program b").hexdigest()
    assert sorted(os.listdir(out)) == sorted([f"{digest_a}.pte", f"{digest_b}.pt2", "index.json"])
    assert index["programs"]["//zoo:a_pte"]["file"] == index["programs"]["//zoo:same_pte"]["file"]
    assert index["programs"]["//zoo:a_pte"]["backends"] == ["xnnpack"]
    assert json.loads((out / "index.json").read_text()) == index


def test_bundle_bytes_do_not_depend_on_the_order_of_programs(tmp_path):
    programs = [_program(tmp_path, f"//zoo:{n}_pte", n.encode()) for n in ("x", "y", "z")]
    first, second = tmp_path / "first", tmp_path / "second"
    _build(first, programs)
    _build(second, programs[::-1])
    assert _tree(first) == _tree(second)


def test_a_program_that_does_not_match_its_manifest_fails_in_one_line(tmp_path, capsys):
    bad = _program(tmp_path, "//zoo:bad_pte", b"corrupt", recorded="0" * 64)
    config = tmp_path / "config.json"
    out = tmp_path / "out"
    config.write_text(json.dumps({"label": "//app:b", "output": str(out), "programs": [bad]}))
    assert model_bundle.main([str(config)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ERROR: //app:b: //zoo:bad_pte: bad_pte.pte has sha256 ")
    assert err.count("\n") == 1
    assert not out.exists()  # no partial bundle


def test_index_entry_rejects_a_missing_digest(tmp_path):
    program = _program(tmp_path, "//zoo:p_pte", b"p")
    (tmp_path / "p_pte.pte.json").write_text("{}")
    with pytest.raises(model_bundle.BundleError, match="its manifest records None"):
        model_bundle.index_entry(program, manifest.sha256_file)


def _with_tokenizer(tmp_path, program, data, recorded=None):
    path = tmp_path / "tokenizer.json"
    path.write_bytes(data)
    digest = recorded or hashlib.sha256(data).hexdigest()
    meta = tmp_path / "tok.tokenizer.json"
    meta.write_text(json.dumps({"file": {"sha256": digest}, "tokenizer_format": "huggingface", "bos_id": 0,
                                "eos_ids": [1]}))
    return dict(program, tokenizer={"file": str(path), "manifest": str(meta)})


def test_an_llm_programs_tokenizer_ships_beside_it_by_digest(tmp_path):
    lm = _with_tokenizer(tmp_path, _program(tmp_path, "//zoo:lm_pte", b"lm"), b'{"model": {}}')
    out = tmp_path / "out"
    index = _build(out, [lm])
    digest = hashlib.sha256(b'{"model": {}}').hexdigest()
    assert index["programs"]["//zoo:lm_pte"]["tokenizer"] == {
        "file": f"{digest}.json", "sha256": digest, "size": 13, "format": "huggingface", "bos_id": 0, "eos_ids": [1]}
    assert (out / f"{digest}.json").read_bytes() == b'{"model": {}}'


def test_a_tokenizer_that_does_not_match_its_manifest_fails(tmp_path):
    lm = _with_tokenizer(tmp_path, _program(tmp_path, "//zoo:lm_pte", b"lm"), b"{}", recorded="0" * 64)
    with pytest.raises(model_bundle.BundleError, match="its tokenizer tokenizer.json has sha256"):
        _build(tmp_path / "out", [lm])
