"""The Starlark side and the exporter agree: on every size expression (linear_expr.bzl vs the
sympy parser in shape_spec.py), on the dtypes, hints, backends, IRs, quantizers, schemes and kernel
libraries each accepts, and the exporter reads a shape spec as large as the analysis accepts."""

import json

import pytest
import torch

from exporter.actions import eager_quantize, lower, quantize, registry
from exporter.core import determinism, dtypes, kernels, shape_spec

with open("tests/starlark/starlark_facts.json", encoding="utf-8") as f:
    FACTS = json.load(f)

NAMES = {"dx": None, "seq": None, "n": None, "batch_2": None, "a": None, "b": None}


def _sympy(text):
    try:
        parsed = shape_spec.parse_size(text, NAMES)
    except ValueError as e:
        return {"text": text, "error": str(e)}
    if isinstance(parsed, int):  # a plain int is a size, but not a derived one
        return {"text": text, "error": "an int"}
    return {"text": text, "name": parsed.name, "a": parsed.a, "b": parsed.b}


@pytest.mark.parametrize("starlark", FACTS["expressions"], ids=lambda e: repr(e["text"]))
def test_both_parsers_agree(starlark):
    theirs = _sympy(starlark["text"])
    if "error" in starlark:
        assert "error" in theirs, f"analysis refuses {starlark['text']!r}, the exporter reads {theirs}"
    else:
        assert theirs == starlark


def test_expressions_refused_only_at_analysis_still_parse_in_the_exporter():
    for text in FACTS["analysis_only"]:
        assert "error" not in _sympy(text)


def test_dtypes_backends_and_irs_agree():
    assert FACTS["dtypes"] == list(dtypes.SHAPE_SPEC)
    assert FACTS["backends"] == list(lower.BACKENDS)
    assert FACTS["irs"] == list(registry.IRS)


def test_quantizers_and_schemes_agree():
    assert FACTS["quantizers"] == list(quantize.QUANTIZERS)
    # The rule knows which schemes need calibration; the exporter knows their settings.
    assert FACTS["schemes"] == {name: needs for name, (_, needs) in quantize.SCHEMES.items()}
    assert FACTS["eager_quantize_schemes"] == list(eager_quantize.SCHEMES)  # torch_export's quantize


def test_the_actions_math_environment_agrees():
    assert FACTS["reproducible_math_env"] == determinism.REPRODUCIBLE_MATH_ENV


def test_kernel_libraries_agree():
    # executorch_program's kernels = "..." names and the libraries the exporter checks against.
    assert FACTS["kernel_libraries"] == list(kernels.BUILTIN)


def test_hints_agree():
    # shape_spec_check.bzl's HINTS, the AUTO, DYNAMIC and STATIC a BUILD file loads, and the
    # hints the exporter turns into torch.export.Dim.AUTO / DYNAMIC / STATIC.
    assert FACTS["hints"] == FACTS["hint_constants"] == list(shape_spec.HINTS)


def test_the_exporter_reads_a_spec_as_large_as_analysis_accepts():
    # The Starlark walks stop at MAX_VALUES steps, so a spec holds at most MAX_VALUES - 1 values
    # (here one input: a list node and its items). The exporter must read all of them.
    count = FACTS["max_values"] - 1
    items = [{"int": i} for i in range(count - 2)] + [{"tensor": {"shape": [2], "dtype": "float32", "hint": None, "fill": None}}]
    big = {"dims": {}, "hint": None, "inputs": [{"name": "xs", "value": {"list": items}}]}
    assert 1 + len(items) == count
    tensors = {}
    value = shape_spec.build_value(big["inputs"][0]["value"], big, torch.Generator().manual_seed(0), "inputs[\"xs\"]", tensors)
    assert len(value) == len(items) and value[:3] == [0, 1, 2] and tuple(value[-1].shape) == (2,)
    assert [path for path, _ in shape_spec.walk_tensors(big)] == [f'inputs["xs"][{len(items) - 1}]']
