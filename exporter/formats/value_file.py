"""The .etvals value file, on numpy alone (no torch): the values the native runner reads and
writes (native/etvals.cc is its C++ side), and the values a numerics_test's build action writes
for the test to compare (numerics_values.py). checks/etvals.py gives it torch tensors.

Layout, little-endian:
  8 bytes   magic b"ETVALS1\\n"
  u32       number of values
  per value:
    u8      kind: ord("T") tensor, ord("I") int, ord("D") double, ord("B") bool, ord("N") None
    u8      dtype, ExecuTorch's ScalarType code (core/dtypes.py); for I/D/B the payload's type
    u8      ndim (0 for I/D/B/N)
    u8      0
    i64     dims[ndim]
    u64     nbytes
    bytes   the data, contiguous, row-major (8 bytes for I/D/B, none for N)

A tensor reads back as a Tensor: its dtype's name as torch prints it ("float32") and its values
as a numpy array; bfloat16, which numpy lacks, is widened to float32 (exactly) and narrowed
again when written.
"""

import dataclasses
import struct

import numpy as np

from exporter.core import dtypes
from exporter.core.errors import BadFile

MAGIC = b"ETVALS1\n"
_KINDS = tuple(map(ord, "TIDBN"))
# The runtime's sizes and strides are int32: no product of sizes may pass it (etvals.cc agrees).
_MAX_EXTENT = 2**31 - 1
# The tensor dtypes a value file holds (the ones etvals.cc knows), by torch's name.
DTYPE_NAMES = ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bool", "bfloat16")
CODES = {d.torch: d.code for d in dtypes.TABLE if d.torch in DTYPE_NAMES}
_NAMES = {code: name for name, code in CODES.items()}
# numpy's dtype for each one's bytes: bfloat16 is read as its raw 16 bits.
_STORED = {name: np.dtype("uint16" if name == "bfloat16" else name) for name in DTYPE_NAMES}


@dataclasses.dataclass(frozen=True, eq=False)
class Tensor:
    """A tensor of a value file: dtype, torch's name for it; array, its values (bfloat16 as float32)."""

    dtype: str
    array: np.ndarray

    @property
    def shape(self):
        return tuple(self.array.shape)


def tensor(array):
    """A Tensor of a numpy array (of one of DTYPE_NAMES but bfloat16)."""
    return Tensor(str(array.dtype), np.ascontiguousarray(array))


def _tensor_bytes(value):
    if value.dtype not in CODES:
        raise ValueError(f"a value file holds tensors of {', '.join(DTYPE_NAMES)}, ints, floats, bools and None, "
                         f"not {value.dtype}")
    array = np.ascontiguousarray(value.array)
    if value.dtype == "bfloat16":  # the high half of each float32
        array = (array.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return array.astype(_STORED[value.dtype], copy=False).tobytes()


def _encode(value):
    if value is None:
        return ord("N"), 0, (), b""
    if isinstance(value, bool):
        return ord("B"), 11, (), struct.pack("<q", int(value))
    if isinstance(value, int):
        return ord("I"), 4, (), struct.pack("<q", value)
    if isinstance(value, float):
        return ord("D"), 7, (), struct.pack("<d", value)
    if isinstance(value, np.ndarray):
        value = tensor(value)
    if not isinstance(value, Tensor):
        raise ValueError(f"a value file holds tensors, ints, floats, bools and None, not {type(value).__name__}")
    return ord("T"), CODES.get(value.dtype, 0), value.shape, _tensor_bytes(value)


def encode(values):
    """The bytes of a value file holding values: Tensors (or numpy arrays), ints, floats, bools, None."""
    parts = [MAGIC, struct.pack("<I", len(values))]
    for value in values:
        kind, code, shape, raw = _encode(value)
        parts += [struct.pack("<BBBB", kind, code, len(shape), 0), struct.pack(f"<{len(shape)}q", *shape),
                  struct.pack("<Q", len(raw)), raw]
    return b"".join(parts)


def write(path, values):
    """Writes a value file (see encode)."""
    with open(path, "wb") as f:
        f.write(encode(values))


def _element_bytes(kind, code):
    if kind == ord("T"):
        return _STORED[_NAMES[code]].itemsize
    return 0 if kind == ord("N") else 8


def _value(kind, code, shape, raw):
    if kind == ord("T"):
        name = _NAMES[code]
        array = np.frombuffer(raw, dtype=_STORED[name]).reshape(shape).copy()
        if name == "bfloat16":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        return Tensor(name, array)
    if kind == ord("N"):
        return None
    (x,) = struct.unpack("<d" if kind == ord("D") else "<q", raw)
    return bool(x) if kind == ord("B") else x


class _Reader:
    """Takes a value file's fields in order, each checked against what is left of it."""

    def __init__(self, data, path):
        self.data, self.path, self.pos = data, path, 12

    def bad(self, what):
        return BadFile(f"{self.path}: {what}")

    def take(self, fmt, what):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise self.bad(f"truncated: {what} is cut off at byte {len(self.data)}")
        self.pos += size
        return struct.unpack_from(fmt, self.data, self.pos - size)

    def value(self, index):
        which = f"value {index}"
        kind, code, ndim, _ = self.take("<BBBB", which)
        shape = self.take(f"<{ndim}q", which)
        (nbytes,) = self.take("<Q", which)
        if kind not in _KINDS:
            raise self.bad(f"{which} has kind {kind}; known: {', '.join(chr(k) for k in _KINDS)}")
        if kind == ord("T") and code not in _NAMES:
            raise self.bad(f"{which} has dtype code {code}, which this reader does not know")
        if kind != ord("T") and ndim:
            raise self.bad(f"{which} is a scalar with {ndim} dims")
        numel, extent = 1, 1
        for size in shape:
            numel, extent = numel * size, extent * max(size, 1)
        if any(size < 0 for size in shape) or extent > _MAX_EXTENT:
            raise self.bad(f"{which} has sizes {list(shape)}, beyond what a tensor can have")
        expected = numel * _element_bytes(kind, code) if kind == ord("T") else _element_bytes(kind, code)
        if nbytes != expected:
            raise self.bad(f"{which} holds {nbytes} bytes; its kind and sizes need {expected}")
        if self.pos + nbytes > len(self.data):
            raise self.bad(f"truncated: {which} is cut off at byte {len(self.data)}")
        raw = self.data[self.pos:self.pos + nbytes]
        self.pos += nbytes
        return _value(kind, code, shape, raw)


def decode(data, path):
    """The values of a value file's bytes: Tensors, and Python int/float/bool/None for scalars.
    Every count and size is checked against the bytes before it is used; a file that fails
    raises BadFile naming path."""
    reader = _Reader(data, path)
    if len(data) < 12 or data[:8] != MAGIC:
        raise reader.bad("not an etvals file")
    (count,) = struct.unpack_from("<I", data, 8)
    if count > (len(data) - 12) // 12:  # a value takes at least 12 bytes: its head and its size
        raise reader.bad(f"says it holds {count} values, more than its {len(data)} bytes can")
    values = [reader.value(index) for index in range(count)]
    if reader.pos != len(data):
        raise reader.bad(f"{len(data) - reader.pos} bytes after the last value")
    return values


def read(path):
    """The values of the value file at path (see decode)."""
    with open(path, "rb") as f:
        return decode(f.read(), path)
