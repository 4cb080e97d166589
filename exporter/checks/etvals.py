"""The native runner's value files (.etvals): the inputs numerics_test gives //native:et_runner
and the outputs it reads back. Written and read with struct; native/etvals.cc is the C++ side.
Only tests use it, so it lives in checks, outside the exporter actions' tool.

Layout, little-endian:
  8 bytes   magic b"ETVALS1\\n"
  u32       number of values
  per value:
    u8      kind: ord("T") tensor, ord("I") int, ord("D") double, ord("B") bool, ord("N") None
    u8      dtype, ExecuTorch's ScalarType code (see DTYPES); for I/D/B the payload's type
    u8      ndim (0 for I/D/B/N)
    u8      0
    i64     dims[ndim]
    u64     nbytes
    bytes   the data, contiguous, row-major (8 bytes for I/D/B, none for N)
"""

import struct

import torch

from exporter.core.errors import BadFile

MAGIC = b"ETVALS1\n"
_KINDS = tuple(map(ord, "TIDBN"))
# The runtime's sizes and strides are int32: no product of sizes may pass it (etvals.cc agrees).
_MAX_EXTENT = 2**31 - 1
# ExecuTorch ScalarType code -> torch dtype (the runtime's c10 numbering).
DTYPES = {0: torch.uint8, 1: torch.int8, 2: torch.int16, 3: torch.int32, 4: torch.int64,
          6: torch.float32, 7: torch.float64, 11: torch.bool}
CODES = {dtype: code for code, dtype in DTYPES.items()}


def _encode(value):
    if value is None:
        return ord("N"), 0, (), b""
    if isinstance(value, bool):
        return ord("B"), 11, (), struct.pack("<q", int(value))
    if isinstance(value, int):
        return ord("I"), 4, (), struct.pack("<q", value)
    if isinstance(value, float):
        return ord("D"), 7, (), struct.pack("<d", value)
    if not isinstance(value, torch.Tensor) or value.dtype not in CODES:
        raise ValueError(f"the native runner takes tensors of {sorted(str(d) for d in CODES)}, ints, "
                         f"floats, bools and None, not {getattr(value, 'dtype', type(value).__name__)}")
    tensor = value.detach().contiguous()
    raw = tensor.reshape(-1).view(torch.uint8).numpy().tobytes()
    return ord("T"), CODES[tensor.dtype], tuple(tensor.shape), raw


def write(path, values):
    """Writes a list of tensors and Python scalars."""
    parts = [MAGIC, struct.pack("<I", len(values))]
    for value in values:
        kind, code, shape, raw = _encode(value)
        parts += [struct.pack("<BBBB", kind, code, len(shape), 0), struct.pack(f"<{len(shape)}q", *shape),
                  struct.pack("<Q", len(raw)), raw]
    with open(path, "wb") as f:
        f.write(b"".join(parts))


def read(path):
    """The values of a file: tensors, and Python int/float/bool for scalars. Every count and size
    is checked against the file before it is used; a file that fails raises BadFile naming it."""
    with open(path, "rb") as f:
        data = f.read()

    def bad(what):
        return BadFile(f"{path}: {what}")

    if len(data) < 12 or data[:8] != MAGIC:
        raise bad("not an etvals file")
    (count,), pos, values = struct.unpack_from("<I", data, 8), 12, []
    if count > (len(data) - 12) // 12:  # a value takes at least 12 bytes: its head and its size
        raise bad(f"says it holds {count} values, more than its {len(data)} bytes can")

    def take(fmt, what):
        nonlocal pos
        size = struct.calcsize(fmt)
        if pos + size > len(data):
            raise bad(f"truncated: {what} is cut off at byte {len(data)}")
        pos += size
        return struct.unpack_from(fmt, data, pos - size)

    for index in range(count):
        which = f"value {index}"
        kind, code, ndim, _ = take("<BBBB", which)
        shape = take(f"<{ndim}q", which)
        (nbytes,) = take("<Q", which)
        if kind not in _KINDS:
            raise bad(f"{which} has kind {kind}; known: {', '.join(chr(k) for k in _KINDS)}")
        if kind == ord("T") and code not in DTYPES:
            raise bad(f"{which} has dtype code {code}, which this reader does not know")
        if kind != ord("T") and ndim:
            raise bad(f"{which} is a scalar with {ndim} dims")
        numel, extent = 1, 1
        for size in shape:
            numel, extent = numel * size, extent * max(size, 1)
        if any(size < 0 for size in shape) or extent > _MAX_EXTENT:
            raise bad(f"{which} has sizes {list(shape)}, beyond what a tensor can have")
        expected = numel * DTYPES[code].itemsize if kind == ord("T") else 0 if kind == ord("N") else 8
        if nbytes != expected:
            raise bad(f"{which} holds {nbytes} bytes; its kind and sizes need {expected}")
        if pos + nbytes > len(data):
            raise bad(f"truncated: {which} is cut off at byte {len(data)}")
        raw = data[pos:pos + nbytes]
        pos += nbytes
        if kind == ord("T"):
            values.append(torch.frombuffer(bytearray(raw), dtype=DTYPES[code]).reshape(shape).clone()
                          if nbytes else torch.empty(shape, dtype=DTYPES[code]))
        elif kind == ord("N"):
            values.append(None)
        else:
            (x,) = struct.unpack("<d" if kind == ord("D") else "<q", raw)
            values.append(bool(x) if kind == ord("B") else x)
    if pos != len(data):
        raise bad(f"{len(data) - pos} bytes after the last value")
    return values
