"""Tensors as numpy arrays, for the comparisons of numerics_test (numerics.py, differences.py)
without torch: a value file's Tensors (formats/value_file.py), numpy arrays, and torch tensors
from the callers that have them (bundled_program_test, the runners' own tests)."""

import numpy as np

from exporter.formats import value_file


def dtype_name(value):
    """torch's name of a value's dtype: "float32", "int64", "bfloat16"."""
    if isinstance(value, value_file.Tensor):
        return value.dtype
    if not hasattr(value, "dtype"):  # a scalar output
        return type(value).__name__
    return str(value.dtype).replace("torch.", "")


def shape(value):
    return tuple(getattr(value, "shape", ()))


def float64(value):
    """The values as a float64 numpy array (what the comparisons compute in)."""
    if isinstance(value, value_file.Tensor):
        return value.array.astype(np.float64)
    if isinstance(value, np.ndarray):
        return value.astype(np.float64)
    if hasattr(value, "detach"):  # a torch tensor; torch itself is never imported here
        return value.detach().cpu().double().numpy()
    return np.asarray(value, dtype=np.float64)


def describe(value):
    """'float32[2, 3]', as numerics_test reports a tensor."""
    return f"{dtype_name(value)}[{', '.join(map(str, shape(value)))}]"
