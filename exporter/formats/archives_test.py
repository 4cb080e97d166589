"""formats/archives.py on ETRecords: the tiny portable program's record passes; a record whose
pickled entry or size expression would run code is refused in one line and the code never runs.
(.pt2 files: pt2_test.py, which loads them through pt2.load.)"""

import contextlib
import json
import pickle
import zipfile

import pytest

from exporter.core.errors import BadFile
from exporter.formats import archives
from exporter.tests.built_programs import path


class _CreatesMarker:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_the_built_etrecord_passes():
    archives.check_etrecord(path("tiny_portable_pte.etrecord"))


@pytest.mark.parametrize("entry", ["_example_inputs", "_state_dict", "reference_outputs"])
def test_an_etrecord_whose_pickle_could_run_code_is_refused(tmp_path, entry):
    marker, poisoned = tmp_path / "marker", tmp_path / "poisoned.etrecord"
    payload = pickle.dumps(_CreatesMarker(str(marker)))
    with zipfile.ZipFile(path("tiny_portable_pte.etrecord")) as src, zipfile.ZipFile(poisoned, "w") as dst:
        names = src.namelist()
        target = next((n for n in names if n.endswith(entry)), entry)
        for name in names:
            dst.writestr(name, payload if name == target else src.read(name))
        if target not in names:
            dst.writestr(target, payload)
    with pytest.raises(BadFile) as refused:
        archives.check_etrecord(str(poisoned))
    message = str(refused.value)
    assert "\n" not in message and message.startswith(str(poisoned)) and target in message, message
    assert not marker.exists()


def _record_with_code(tmp_path, marker):
    """The tiny record, its edge program's first size made an expression that creates marker."""
    poisoned, entry = tmp_path / "poisoned.etrecord", "edge_dialect_exported_program/forward"
    with zipfile.ZipFile(path("tiny_portable_pte.etrecord")) as src, zipfile.ZipFile(poisoned, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == entry:
                program = json.loads(data)
                sizes = next(iter(program["graph_module"]["graph"]["tensor_values"].values()))["sizes"]
                code = f"__import__('pathlib').Path({str(marker)!r}).touch()"
                sizes[0] = {"as_expr": {"expr_str": code, "hint": sizes[0]}}
                data = json.dumps(program).encode()
            dst.writestr(name, data)
    return str(poisoned), entry


def test_executorch_alone_runs_an_etrecord_s_expressions(tmp_path):
    """Why check_etrecord reads them: ExecuTorch's reader gives every size expression to
    sympy.sympify, which evaluates Python. If it stops doing that, this fails."""
    from executorch.devtools.etrecord import parse_etrecord

    marker = tmp_path / "marker"
    with contextlib.suppress(Exception):  # whatever ExecuTorch raises after running the code
        parse_etrecord(_record_with_code(tmp_path, marker)[0])
    assert marker.exists()


def test_an_etrecord_whose_expression_could_run_code_is_refused(tmp_path):
    poisoned, entry = _record_with_code(tmp_path, tmp_path / "marker")
    with pytest.raises(BadFile) as refused:
        archives.check_etrecord(poisoned)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(poisoned) and entry in message, message


def test_a_file_that_is_no_zip_is_refused_in_one_line(tmp_path):
    bogus = tmp_path / "bogus.etrecord"
    bogus.write_bytes(b"not a zip")
    with pytest.raises(BadFile, match="not a zip archive"):
        archives.check_etrecord(str(bogus))
