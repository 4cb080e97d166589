"""The native runner's value files (.etvals) as torch tensors: the inputs a test gives
//native:et_runner and the outputs it reads back. The format and its checks are
formats/value_file.py (numpy, no torch), which numerics_test reads without torch; native/etvals.cc
is the C++ side. Only tests use this face of it, so it lives in checks.
"""

import torch

from exporter.formats import value_file

# ExecuTorch ScalarType code -> torch dtype (the runtime's c10 numbering).
DTYPES = {code: getattr(torch, name) for name, code in value_file.CODES.items()}
CODES = {dtype: code for code, dtype in DTYPES.items()}


def _value(value):
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if not isinstance(value, torch.Tensor) or value.dtype not in CODES:
        raise ValueError(f"the native runner takes tensors of {sorted(str(d) for d in CODES)}, ints, "
                         f"floats, bools and None, not {getattr(value, 'dtype', type(value).__name__)}")
    name = str(value.dtype).replace("torch.", "")
    tensor = value.detach().contiguous()
    return value_file.Tensor(name, (tensor.float() if name == "bfloat16" else tensor).numpy())


def write(path, values):
    """Writes a list of tensors and Python scalars."""
    value_file.write(path, [_value(v) for v in values])


def _tensor(value):
    if not isinstance(value, value_file.Tensor):
        return value
    tensor = torch.from_numpy(value.array.copy())
    return tensor.to(torch.bfloat16) if value.dtype == "bfloat16" else tensor


def read(path):
    """The values of a file: tensors, and Python int/float/bool for scalars. Every count and size
    is checked against the file before it is used; a file that fails raises BadFile naming it."""
    return [_tensor(v) for v in value_file.read(path)]
