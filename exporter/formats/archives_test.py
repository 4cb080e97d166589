"""formats/archives.py on ETRecords: the tiny portable program's record passes; a record whose
pickled entry would run code is refused in one line and the code never runs. (.pt2 files:
pt2_test.py, which loads them through pt2.load.)"""

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


def test_a_file_that_is_no_zip_is_refused_in_one_line(tmp_path):
    bogus = tmp_path / "bogus.etrecord"
    bogus.write_bytes(b"not a zip")
    with pytest.raises(BadFile, match="not a zip archive"):
        archives.check_etrecord(str(bogus))
