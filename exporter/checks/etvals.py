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

MAGIC = b"ETVALS1\n"
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
    """The values of a file: tensors, and Python int/float/bool for scalars."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != MAGIC:
        raise ValueError(f"{path}: not an etvals file")
    (count,), pos, values = struct.unpack_from("<I", data, 8), 12, []
    for _ in range(count):
        kind, code, ndim, _ = struct.unpack_from("<BBBB", data, pos)
        shape = struct.unpack_from(f"<{ndim}q", data, pos + 4)
        pos += 4 + 8 * ndim
        (nbytes,) = struct.unpack_from("<Q", data, pos)
        raw = data[pos + 8:pos + 8 + nbytes]
        pos += 8 + nbytes
        if kind == ord("T"):
            values.append(torch.frombuffer(bytearray(raw), dtype=DTYPES[code]).reshape(shape).clone()
                          if nbytes else torch.empty(shape, dtype=DTYPES[code]))
        elif kind == ord("N"):
            values.append(None)
        else:
            (x,) = struct.unpack("<d" if kind == ord("D") else "<q", raw)
            values.append(bool(x) if kind == ord("B") else x)
    return values
