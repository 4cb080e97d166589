"""ETRecords (docs/deployment.md) of the tiny portable program that Bazel built: ExecuTorch's own
record, with graph ids and times made stable, and the same bytes in another process."""

import os
import subprocess
import sys
import zipfile

from exporter.actions import etrecord
from exporter.tests.built_programs import path


def test_the_etrecord_is_exectorchs_and_normalised():
    from executorch.devtools.etrecord import parse_etrecord

    record_path = path("tiny_portable_pte.etrecord")
    record = parse_etrecord(record_path)
    assert record.exported_program is not None and record._debug_handle_map["forward"]
    ids, export_graph_id = etrecord.graph_ids(record_path)
    assert ids == set(range(1, len(ids) + 1)) and 0 < export_graph_id <= len(ids) + 1
    with zipfile.ZipFile(record_path) as z:
        assert {info.date_time for info in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}


_AGAIN = """
import sys
from exporter.actions import etrecord, lower
from exporter.formats import pt2
import json
with open(sys.argv[2]) as f:
    constants = json.load(f)["constant_methods"]
program, _ = lower.lower({"forward": pt2.load(sys.argv[1])}, [], constants, False, generate_etrecord=True)
etrecord.write(program, sys.argv[3])
"""


def test_the_etrecord_is_the_same_in_another_process_folder_and_hash_seed(tmp_path):
    out = tmp_path / "again.etrecord"
    env = dict(os.environ, PYTHONHASHSEED="5", PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", _AGAIN, path("tiny_ep.pt2"), path("tiny_portable_pte.pte.json"),
                           str(out)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(path("tiny_portable_pte.etrecord"), "rb") as built, open(out, "rb") as again:
        assert built.read() == again.read()
