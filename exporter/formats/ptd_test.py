""".ptd entries against ExecuTorch's own deserializer, and hostile files: a damaged .ptd raises
BadFile, one line naming it and the reason, never another exception, and never reads past its end."""

import hashlib
import os
import random

import pytest
import torch
from executorch.exir._serialize._cord import Cord
from executorch.extension.flat_tensor.serialize.serialize import FlatTensorSerializer

from exporter.actions import lower
from exporter.core.errors import BadFile
from exporter.formats import ptd

XNNPACK_PTD = "exporter/tests/conv_net_external_pte.ptd"


@pytest.fixture(scope="module")
def portable_ptd(tmp_path_factory):
    """A portable program's .ptd: weights keyed by name, with their layouts."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2)).eval()
    with torch.no_grad():
        ep = torch.export.export(model, (torch.ones(1, 4),))
    program, _ = lower.lower(ep, [], external_weights=True)
    path = str(tmp_path_factory.mktemp("ptd") / "weights.ptd")
    lower._write_weights(program, path)
    return path


def _theirs(path):
    with open(path, "rb") as f:
        payload = FlatTensorSerializer().deserialize(Cord(f.read()))
    return {key: (len(payload.buffers[e.buffer_index]), hashlib.sha256(bytes(payload.buffers[e.buffer_index])).hexdigest(),
                  e.tensor_layout) for key, e in payload.named_data.items()}


@pytest.mark.parametrize("which", ["xnnpack", "portable"])
def test_entries_match_executorch_deserializer(which, portable_ptd):
    path = XNNPACK_PTD if which == "xnnpack" else portable_ptd
    read = ptd.read(path)
    entries = read.entries
    assert read.file_bytes == os.path.getsize(path)
    theirs = _theirs(path)
    assert set(entries) == set(theirs) and entries
    for key, entry in entries.items():
        their_size, their_sha, layout = theirs[key]
        assert (entry.size, entry.sha256) == (their_size, their_sha)
        assert (entry.dtype is None) == (layout is None)
        if layout is not None:
            assert list(entry.sizes) == list(layout.sizes) and list(entry.dim_order) == list(layout.dim_order)
        assert ptd.Entry.from_json(entry.to_json()) == entry
    if which == "portable":
        assert entries["0.weight"].layout_text() == "float32[3, 4]"
    else:  # XNNPACK keys its blobs by the sha256 of their bytes
        assert any(key == entry.sha256 for key, entry in entries.items())


def _damaged(data, tmp_path, name):
    path = tmp_path / name
    path.write_bytes(bytes(data))
    return str(path)


def test_damaged_files_raise_bad_file_only(tmp_path, portable_ptd):
    data = open(portable_ptd, "rb").read()
    cases: dict[str, bytes | bytearray] = {"empty": b"", "truncated": data[: len(data) // 2], "header": data[:24],
                                           "text": b"not a ptd at all" * 8}
    past_end = bytearray(data)
    past_end[8 + 32:8 + 40] = (1 << 40).to_bytes(8, "little")  # segment data size
    cases["past_end"] = past_end
    for name, case in cases.items():
        with pytest.raises(BadFile, match=f"{name}: corrupt: "):
            ptd.read(_damaged(case, tmp_path, name))
    rng = random.Random(0)
    for i in range(60):  # seeded random byte changes: BadFile or a readable file, nothing else
        copy = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            copy[rng.randrange(len(copy))] = rng.randrange(256)
        try:
            ptd.read(_damaged(copy, tmp_path, f"random{i}"))
        except BadFile:
            pass
