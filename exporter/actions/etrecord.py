"""The ExecuTorchETRecord action: ExecuTorch's ETRecord (the debug record that devtools'
Inspector joins with a runtime ETDump) of an executorch_program, written by the lowering itself.

It is an action of its own, so that only builds that ask for it (output group `etrecord`, a
numerics_test) pay for it: it lowers the program's .pt2 files again with generate_etrecord and
fails unless the .pte it gets is byte-identical to the program's, so the record describes the
shipped .pte. ExecuTorch writes two things that differ from process to process, and this module
makes them stable (docs/deployment.md, "Debug records"):

- graph ids: `export_graph_id` and each node's `from_node` provenance hold Python object ids
  (id(graph)); they are renumbered 1, 2, ... in order of first appearance in the record, the
  same number for the same id everywhere, which is what Inspector matches them by;
- the zip's entries carry the time of writing; they are rewritten with a fixed time.
"""

import hashlib
import io
import json
import os
import re
import zipfile

from exporter.actions import lower
from exporter.core import atomic
from exporter.core.errors import UserError

# A date the zip format can hold (1980 or later); what `zip -X`-style reproducible archives use.
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
# In the programs' JSON, node metadata is itself JSON text, so the key's quotes are escaped.
# The record's entries that hold tensors (torch.save archives), not JSON text.
_TENSOR_ENTRIES = ("_state_dict", "_constants", "_example_inputs")
_GRAPH_ID = re.compile(rb'(\\?"graph_id\\?": )(\d+)')


def normalize(raw):
    """The ETRecord zip `raw` (bytes) with stable graph ids and entry times."""
    ids = {}

    def renumber(match):
        number = ids.setdefault(match.group(2), len(ids) + 1)
        return match.group(1) + b"%d" % number

    source = zipfile.ZipFile(io.BytesIO(raw))
    entries = []
    for info in source.infolist():
        data = source.read(info)
        if info.filename == "export_graph_id":
            data = str(ids.setdefault(data.strip(), len(ids) + 1)).encode()
        elif not info.filename.endswith(_TENSOR_ENTRIES):
            data = _GRAPH_ID.sub(renumber, data)  # the programs' JSON; tensors stay as they are
        entries.append((info.filename, data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
            info.external_attr = 0o600 << 16
            target.writestr(info, data)
    return out.getvalue()


def write(et_program, path):
    """Writes et_program's ETRecord (lowered with generate_etrecord) to path, normalised."""
    buffer = io.BytesIO()
    et_program.get_etrecord().save(buffer)
    atomic.write_bytes(path, normalize(buffer.getvalue()))


def run(config):
    """Runs the action for an ETRecordConfig."""
    et_program = lower.lowered(config, generate_etrecord=True)[0]
    with open(config.pte, "rb") as f:
        built = f.read()
    if et_program.buffer != built:
        raise UserError(f"lowering again gave a .pte other than {os.path.basename(config.pte)} "
                        f"(sha256 {hashlib.sha256(et_program.buffer).hexdigest()[:12]} against "
                        f"{hashlib.sha256(built).hexdigest()[:12]}), so an ETRecord would not describe it; "
                        f"the lowering is not deterministic, please report it")
    write(et_program, config.outputs["etrecord"])


def describe(path):
    """{entry name: size} of an ETRecord, for messages and docs."""
    with zipfile.ZipFile(path) as record:
        return {info.filename: info.file_size for info in record.infolist()}


def graph_ids(path):
    """The distinct graph ids in an ETRecord's programs (normalised records: 1..n)."""
    with zipfile.ZipFile(path) as record:
        found = set()
        for info in record.infolist():
            if not info.filename.endswith(_TENSOR_ENTRIES):
                found.update(int(m[1]) for m in _GRAPH_ID.findall(record.read(info)))
        graph_id = record.read("export_graph_id") if "export_graph_id" in record.namelist() else None
    return found, json.loads(graph_id) if graph_id else None
