"""foundation_budget_test's runner on files of known sizes: the ratio it reports, and a failure
when sharing saves less than max_ratio allows (the zoo's own test only ever passes)."""

import json

import pytest

from exporter.checks import shared_budget


def _config(tmp_path, max_ratio):
    """A foundation's .ptd of 1000 bytes, two programs' .pte of 100 and 300 bytes, and their
    stand-alone counterparts of 1100 and 1300 bytes (the second with a .pte and a .ptd)."""
    sizes = {"base.ptd": 1000, "a.pte": 100, "b.pte": 300, "a_alone.pte": 1100, "b_alone.pte": 300, "b_alone.ptd": 1000}
    for name, size in sizes.items():
        (tmp_path / name).write_bytes(bytes(size))
    path = tmp_path / "config.json"
    path.write_text(json.dumps({
        "label": "//pkg:budget_test", "foundation": "//pkg:foundation", "ptd": str(tmp_path / "base.ptd"),
        "max_ratio": max_ratio,
        "pairs": [
            {"program": "//pkg:a", "pte": str(tmp_path / "a.pte"), "standalone": "//pkg:a_alone",
             "standalone_files": [str(tmp_path / "a_alone.pte")]},
            {"program": "//pkg:b", "pte": str(tmp_path / "b.pte"), "standalone": "//pkg:b_alone",
             "standalone_files": [str(tmp_path / "b_alone.pte"), str(tmp_path / "b_alone.ptd")]},
        ],
    }))
    return str(path)


def test_the_ratio_of_bytes_shipped_passes_within_max_ratio(tmp_path, capsys):
    assert shared_budget.main([_config(tmp_path, 0.6)]) == 0
    out = capsys.readouterr().out
    assert "first 1: shipped 1,100 bytes, stand-alone 1,100 bytes: ratio 1.000" in out, out
    assert "first 2: shipped 1,400 bytes, stand-alone 2,400 bytes: ratio 0.583" in out, out
    assert "ratio 0.583 within max_ratio 0.6" in out, out


@pytest.mark.parametrize("max_ratio", [0.5, 0.58])
def test_sharing_that_saves_less_than_max_ratio_fails(tmp_path, capsys, max_ratio):
    assert shared_budget.main([_config(tmp_path, max_ratio)]) == 1
    err = capsys.readouterr().err
    assert f"ratio 0.583 OVER max_ratio {max_ratio}" in err, err
    assert err.rstrip().endswith("Sharing saves less than the test expects: check that each program keeps only its own "
                                 "tensors in its .pte (its manifest's \"foundation\" record), or raise max_ratio."), err
