"""Dtype names: torch's ("float32"), ExecuTorch's ScalarType ("Float", number 6, "FLOAT" in the
.pte schema, as kernel lists name it), and their sizes, from one table. No torch import: the
.pte readers (formats) use it too."""

import collections

Dtype = collections.namedtuple("Dtype", "torch executorch code bytes")
Dtype.__doc__ = "One dtype: torch's name, ExecuTorch's ScalarType name and number, bytes per element."

# ExecuTorch's ScalarType numbers: runtime/core/portable_type/scalar_type.h.
TABLE = (
    Dtype("uint8", "Byte", 0, 1),
    Dtype("int8", "Char", 1, 1),
    Dtype("int16", "Short", 2, 2),
    Dtype("int32", "Int", 3, 4),
    Dtype("int64", "Long", 4, 8),
    Dtype("float16", "Half", 5, 2),
    Dtype("float32", "Float", 6, 4),
    Dtype("float64", "Double", 7, 8),
    Dtype("bool", "Bool", 11, 1),
    Dtype("bfloat16", "BFloat16", 15, 2),
    Dtype("uint16", "UInt16", 27, 2),
    Dtype("uint32", "UInt32", 28, 4),
    Dtype("uint64", "UInt64", 29, 8),
)

# What a shape_spec's tensor may be, in the order the rules list them (exporter_facts.bzl's
# SHAPE_SPEC_DTYPES, which rules/private/lib/shape_spec_check.bzl loads).
SHAPE_SPEC = ("float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool")

_BY_SCHEMA_NAME = {d.executorch.upper(): d for d in TABLE}
_BY_CODE = {d.code: d for d in TABLE}
_BY_TORCH = {d.torch: d for d in TABLE}


def torch_name(scalar_type):
    """'float32' from a .pte's ScalarType ("FLOAT", or ExecuTorch's enum member); an unknown one
    lower-cased."""
    name = scalar_type if isinstance(scalar_type, str) else scalar_type.name
    known = _BY_SCHEMA_NAME.get(name)
    return known.torch if known else name.lower()


def executorch_name(code):
    """'Float' from ScalarType number 6, as kernel lists' type aliases name it; else the number."""
    known = _BY_CODE.get(code)
    return known.executorch if known else str(code)


def element_bytes(torch_dtype_name):
    """4 for 'float32'; 0 for a dtype the table does not know."""
    known = _BY_TORCH.get(torch_dtype_name)
    return known.bytes if known else 0
