"""Both size-expression parsers agree: linear_expr.bzl at analysis time and the sympy parser in
exporter/core/shape_spec.py, on every expression of expressions.bzl."""

import json

import pytest

from exporter.core import shape_spec

with open("tests/starlark/shape_spec/parsed_expressions.json", encoding="utf-8") as f:
    PARSED = json.load(f)

NAMES = {"dx": None, "seq": None, "n": None, "batch_2": None, "a": None, "b": None}


def _sympy(text):
    try:
        parsed = shape_spec.parse_size(text, NAMES)
    except ValueError as e:
        return {"text": text, "error": str(e)}
    if isinstance(parsed, int):  # a plain int is a size, but not a derived one
        return {"text": text, "error": "an int"}
    return {"text": text, "name": parsed.name, "a": parsed.a, "b": parsed.b}


@pytest.mark.parametrize("starlark", PARSED["expressions"], ids=lambda e: repr(e["text"]))
def test_both_parsers_agree(starlark):
    theirs = _sympy(starlark["text"])
    if "error" in starlark:
        assert "error" in theirs, f"analysis refuses {starlark['text']!r}, the exporter reads {theirs}"
    else:
        assert theirs == starlark


def test_expressions_refused_only_at_analysis_still_parse_in_the_exporter():
    for text in PARSED["analysis_only"]:
        assert "error" not in _sympy(text)
