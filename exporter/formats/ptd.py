"""Reads a .ptd (ExecuTorch's named data file, flat_tensor.fbs): each entry's key, its bytes'
size and sha256, and its tensor layout when it has one. pte_inspect's .ptd summary and the
foundation's index (actions/foundation.py) both read it here.

A .ptd is an extended header (magic "FH01": where the flatbuffer and the segment data are),
the FlatTensor flatbuffer (named entries, each pointing at a segment) and the segments. The
portable runtime's weights carry a layout and are keyed by the parameter's name; XNNPACK's
are opaque blobs keyed by the sha256 of their bytes. Every offset is checked against the file,
and every layout as the runtime would read it, so a truncated, hostile or foreign file raises
BadFile, one line naming it, and nothing reads past its end.
"""

import dataclasses
import hashlib
import mmap
import os

from exporter.core import dtypes
from exporter.core.errors import BadFile
from exporter.formats import pte_schema


@dataclasses.dataclass(frozen=True)
class Entry:
    """One named entry: its data's size and sha256, and its layout (None for opaque blobs)."""

    size: int
    sha256: str
    dtype: str | None = None
    sizes: tuple[int, ...] | None = None
    dim_order: tuple[int, ...] | None = None

    def layout_text(self):
        """'float32[384, 128]', or 'bytes' for an opaque blob."""
        if self.dtype is None or self.sizes is None:
            return "bytes"
        return f"{self.dtype}[{', '.join(map(str, self.sizes))}]"

    def to_json(self):
        record = {"size": self.size, "sha256": self.sha256}
        if self.dtype is not None and self.sizes is not None and self.dim_order is not None:  # all or none
            record.update(dtype=self.dtype, sizes=list(self.sizes), dim_order=list(self.dim_order))
        return record

    @classmethod
    def from_json(cls, record):
        has_layout = record.get("dtype") is not None
        return cls(int(record["size"]), str(record["sha256"]),
                   str(record["dtype"]) if has_layout else None,
                   tuple(int(s) for s in record["sizes"]) if has_layout else None,
                   tuple(int(d) for d in record["dim_order"]) if has_layout else None)


@dataclasses.dataclass(frozen=True)
class Ptd:
    """A .ptd: its size, the bytes of its segments (each once), and its entries in file order."""

    file_bytes: int
    data_bytes: int
    entries: dict


def schema_path():
    """flat_tensor.fbs (the .ptd schema) beside the installed executorch's program.fbs."""
    program_fbs = pte_schema.executorch_schema_path()
    root = program_fbs[:program_fbs.rindex("/executorch/") + len("/executorch/")]
    return os.path.join(root, "extension/flat_tensor/serialize/flat_tensor.fbs")


def _regions(buf):
    """(flatbuffer end, segment base, segment data bytes) from a .ptd's "FH01" header, checked
    against the file (ExecuTorch's flat_tensor_header.h: u32 length, then four u64)."""
    if len(buf) < 48 or bytes(buf[8:12]) != b"FH01":
        raise pte_schema.Corrupt("no FH01 header: not a .ptd, or cut short")
    offset, size, base, data = (int.from_bytes(buf[at:at + 8], "little") for at in (16, 24, 32, 40))
    if offset + size > len(buf) or base + data > len(buf):
        raise pte_schema.Corrupt(f"its header puts the flatbuffer or the tensor data past the end of its "
                                 f"{len(buf):,} bytes")
    return offset + size, base, data


def _check_layout(key, layout):
    """What ExecuTorch's runtime reads of a layout without checking (native/program_check.cc
    checks the same before the native runtime opens a .ptd)."""
    if not (layout.has("sizes") and layout.has("dim_order")):
        raise pte_schema.Corrupt(f"{key!r} has a layout without sizes or dim_order")
    sizes, order = list(layout.sizes), list(layout.dim_order)
    if len(sizes) != len(order) or min(sizes, default=0) < 0 or any(d >= len(sizes) for d in order):
        raise pte_schema.Corrupt(f"{key!r} has a layout whose sizes {sizes} and dim_order {order} disagree")


def _entry(named, segments, buf, base):
    if not 0 <= named.segment_index < len(segments):
        raise pte_schema.Corrupt(f"{named.key!r} names segment {named.segment_index} of {len(segments)}")
    segment = segments[named.segment_index]
    digest = hashlib.sha256(buf[base + segment.offset:base + segment.offset + segment.size]).hexdigest()
    layout = named.tensor_layout  # XNNPACK's entries (keyed by sha256) have none
    if layout is None:
        return Entry(segment.size, digest)
    _check_layout(named.key, layout)
    return Entry(segment.size, digest, dtypes.torch_name(layout.scalar_type), tuple(layout.sizes),
                 tuple(layout.dim_order))


def parse(buf):
    """The Ptd held in buf (bytes or an mmap); pte_schema.Corrupt if it is not one."""
    flatbuffer_end, base, data_bytes = _regions(buf)
    root = pte_schema.read_root(pte_schema.Schema(schema_path()), buf[:flatbuffer_end])
    segments = list(root.segments)
    for i, s in enumerate(segments):
        if s.offset + s.size > data_bytes:
            raise pte_schema.Corrupt(f"segment {i} runs past the end of the tensor data")
    entries = {}
    for named in root.named_data:
        if named.key in entries:
            raise pte_schema.Corrupt(f"{named.key!r} names two entries")
        entries[named.key] = _entry(named, segments, buf, base)
    return Ptd(len(buf), sum(s.size for s in segments), entries)


def read(path):
    """The Ptd of the file at path; BadFile, one line naming it, if it is not a .ptd."""
    with open(path, "rb") as f:
        try:
            if os.fstat(f.fileno()).st_size < 48:  # too short to map, and to be a .ptd
                return parse(f.read())
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:  # weights may be GBs
                return parse(buf)
        except pte_schema.Corrupt as e:
            raise BadFile(f"{path}: corrupt: {e}") from None
