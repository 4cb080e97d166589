"""Reads a .ptd (ExecuTorch's named data file, flat_tensor.fbs): each entry's key, its bytes'
size and sha256, and its tensor layout when it has one.

A .ptd is an extended header (magic "FH01": where the flatbuffer and the segment data are),
the FlatTensor flatbuffer (named entries, each pointing at a segment) and the segments. The
portable runtime's weights carry a layout and are keyed by the parameter's name; XNNPACK's
are opaque blobs keyed by the sha256 of their bytes. Every offset is checked against the file,
so a truncated or hostile file raises ValueError instead of reading past its end.
"""

import dataclasses
import hashlib
import mmap
import os

from exporter.core import dtypes
from exporter.formats import pte_schema

_HEADER_AT = 8  # after the flatbuffer's root offset and file identifier
_HEADER_MAGIC = b"FH01"
_HEADER_LENGTH = 40


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
        if self.dtype is None:
            return "bytes"
        return f"{self.dtype}[{', '.join(map(str, self.sizes))}]"

    def to_json(self):
        record = {"size": self.size, "sha256": self.sha256}
        if self.dtype is not None:
            record.update(dtype=self.dtype, sizes=list(self.sizes), dim_order=list(self.dim_order))
        return record

    @classmethod
    def from_json(cls, record):
        has_layout = record.get("dtype") is not None
        return cls(int(record["size"]), str(record["sha256"]),
                   str(record["dtype"]) if has_layout else None,
                   tuple(int(s) for s in record["sizes"]) if has_layout else None,
                   tuple(int(d) for d in record["dim_order"]) if has_layout else None)


def _schema_path():
    program_fbs = pte_schema.executorch_schema_path()
    root = program_fbs[:program_fbs.rindex("/executorch/") + len("/executorch/")]
    return os.path.join(root, "extension/flat_tensor/serialize/flat_tensor.fbs")


def _header(buf):
    """(flatbuffer end, segment base offset, segment data size), checked against the file."""
    if len(buf) < _HEADER_AT + _HEADER_LENGTH or bytes(buf[_HEADER_AT:_HEADER_AT + 4]) != _HEADER_MAGIC:
        raise ValueError("no flat_tensor header (FH01)")
    field = lambda at: int.from_bytes(buf[_HEADER_AT + at:_HEADER_AT + at + 8], "little")
    fb_offset, fb_size, base, data_size = field(8), field(16), field(24), field(32)
    if fb_offset + fb_size > len(buf) or base + data_size > len(buf):
        raise ValueError(f"its header points past the end of the file ({len(buf)} bytes)")
    return base, data_size


def _entry(named, segments, buf, base, data_size):
    index = named.segment_index
    if not 0 <= index < len(segments):
        raise ValueError(f"entry {named.key!r} names segment {index} of {len(segments)}")
    offset, size = segments[index].offset, segments[index].size
    if offset + size > data_size:
        raise ValueError(f"entry {named.key!r} lies past the end of the segment data")
    digest = hashlib.sha256(buf[base + offset:base + offset + size]).hexdigest()
    layout = named.tensor_layout
    if layout is None:
        return Entry(size, digest)
    return Entry(size, digest, dtypes.torch_name(layout.scalar_type), tuple(layout.sizes), tuple(layout.dim_order))


def _entries(buf):
    base, data_size = _header(buf)
    root = pte_schema.read_root(pte_schema.Schema(_schema_path()), buf)
    segments = list(root.segments)
    entries = {}
    for named in root.named_data:
        if not isinstance(named.key, str) or not named.key or named.key in entries:
            raise ValueError(f"an entry's key is empty or repeated ({named.key!r})")
        entries[named.key] = _entry(named, segments, buf, base, data_size)
    return entries


def read(path):
    """({key: Entry} of the .ptd at path, its size in bytes); ValueError if it is not one."""
    size = os.path.getsize(path)
    if size == 0:
        raise ValueError("the file is empty")
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        try:
            return _entries(buf), size
        except ValueError:
            raise
        except Exception as e:  # a hostile flatbuffer: offsets out of range, wrong types
            raise ValueError(f"its flatbuffer does not parse ({type(e).__name__}: {e})") from None
