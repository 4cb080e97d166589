"""ETRecords (docs/deployment.md) of the tiny portable program that Bazel built: ExecuTorch's own
record, with graph ids and times made stable, and the same bytes in another process."""

import os
import zipfile

from exporter.actions import etrecord
from exporter.tests import another_process
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


# The tiny program's lowering again, with its ETRecord, in another_process's child (another
# process, folder and hash seed), shared with the other tests' jobs there.
_AGAIN = """
import os, sys
from exporter.actions import etrecord, lower
from exporter.formats import pt2
import json
with open(sys.argv[2]) as f:
    constants = json.load(f)["constant_methods"]
program, _ = lower.lower({"forward": pt2.load(sys.argv[1])}, [], constants, False, generate_etrecord=True)
etrecord.write(program, os.path.join(sys.argv[3], "again.etrecord"))
"""
another_process.register("etrecord_again", _AGAIN, path("tiny_ep.pt2"), path("tiny_portable_pte.pte.json"))


def test_the_etrecord_is_the_same_in_another_process_folder_and_hash_seed():
    assert another_process.SEED != "0"  # the actions' own
    out = os.path.join(another_process.result("etrecord_again")["folder"], "again.etrecord")
    with open(path("tiny_portable_pte.etrecord"), "rb") as built, open(out, "rb") as again:
        assert built.read() == again.read()
