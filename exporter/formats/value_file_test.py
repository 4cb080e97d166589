"""The .etvals value file on numpy: every dtype and scalar round-trips, its bytes are those the
torch face (checks/etvals.py) writes, and a damaged file fails in one line naming it."""

import struct

import numpy as np
import pytest
import torch

from exporter.checks import etvals
from exporter.core.errors import BadFile
from exporter.formats import case_values, value_file


def _values():
    found = [value_file.tensor(np.arange(12, dtype=dtype).reshape(3, 4).astype(dtype))
             for dtype in ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")]
    found += [value_file.tensor(np.array([True, False])), value_file.tensor(np.zeros((8, 0), dtype=np.int64))]
    found += [value_file.Tensor("bfloat16", np.array([1.5, -2.0, 3.140625], dtype=np.float32))]
    return found + [3, -2.5, True, None]


def test_every_dtype_and_scalar_round_trips_to_the_same_bytes():
    data = value_file.encode(_values())
    back = value_file.decode(data, "v.etvals")
    assert value_file.encode(back) == data
    for want, got in zip(_values(), back):
        if isinstance(want, value_file.Tensor):
            assert (got.dtype, got.shape) == (want.dtype, want.shape)
            assert np.array_equal(got.array, want.array)
        else:
            assert got == want and type(got) is type(want)


def test_the_torch_face_writes_and_reads_the_same_bytes(tmp_path):
    tensors = [torch.arange(6, dtype=torch.float32).reshape(2, 3), torch.tensor([1, 2], dtype=torch.int64),
               torch.tensor([0.5, -1.25], dtype=torch.bfloat16), torch.tensor([True]), 7, None]
    etvals.write(str(tmp_path / "t.etvals"), tensors)
    data = (tmp_path / "t.etvals").read_bytes()
    light = value_file.decode(data, "t.etvals")
    assert [v.dtype for v in light[:4]] == ["float32", "int64", "bfloat16", "bool"]
    assert light[2].array.tolist() == [0.5, -1.25]
    assert value_file.encode(light) == data
    back = etvals.read(str(tmp_path / "t.etvals"))
    assert back[2].dtype == torch.bfloat16 and torch.equal(back[2], tensors[2])
    assert torch.equal(back[0], tensors[0]) and back[4:] == [7, None]


@pytest.mark.parametrize("damage, message", [
    (lambda d: b"NOTVALS\n" + d[8:], "not an etvals file"),
    (lambda d: d[:-3], "truncated: value 0 is cut off at byte"),
    (lambda d: d + b"\0", "1 bytes after the last value"),
    (lambda d: d[:8] + struct.pack("<I", 1000) + d[12:], "says it holds 1000 values"),
    (lambda d: d[:13] + bytes([99]) + d[14:], "value 0 has dtype code 99, which this reader does not know"),
])
def test_a_damaged_file_fails_in_one_line_naming_it(damage, message):
    data = value_file.encode([value_file.tensor(np.ones((2, 2), dtype=np.float32))])
    with pytest.raises(BadFile, match=message) as caught:
        value_file.decode(damage(data), "bad.etvals")
    assert str(caught.value).startswith("bad.etvals: ") and "\n" not in str(caught.value)


def test_a_tensor_of_another_dtype_is_refused():
    with pytest.raises(ValueError, match="a value file holds tensors of uint8"):
        value_file.encode([value_file.Tensor("complex64", np.zeros(2, dtype=np.complex64))])


def test_case_values_keep_their_calls_in_order(tmp_path):
    one = value_file.tensor(np.ones(3, dtype=np.float32))
    calls = [case_values.Call("min n=1", "forward", [one, 2], [one], [one]),
             case_values.Call("max n=9", "decode", [one], [one, one], None, "rejected: out of range")]
    written = case_values.CaseValues("the eager model //m:x", calls, 2, ["max n=9"])
    case_values.write(written, str(tmp_path / "v.json"), str(tmp_path / "v.etvals"))
    read = case_values.read(str(tmp_path / "v.json"), str(tmp_path / "v.etvals"))
    assert (read.reference, read.inputs, read.arm64_cases, read.error) == ("the eager model //m:x", 2, ["max n=9"], None)
    assert [(c.name, c.method, len(c.feed), len(c.expected), c.python_error) for c in read.calls] == [
        ("min n=1", "forward", 2, 1, None), ("max n=9", "decode", 1, 2, "rejected: out of range")]
    assert read.calls[0].feed[1] == 2 and read.calls[1].python is None
    assert case_values.encode(read) == case_values.encode(written)
