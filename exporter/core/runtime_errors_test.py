"""The runtime's refusals in words: a missing operator by name, other error codes by theirs, as
ExecuTorch 1.4.1 ("0x:14") and 1.5.1 ("0x14") write them."""

import pytest

from exporter.core import runtime_errors


@pytest.mark.parametrize("message, needed, registered, expected", [
    ("Failed to load method forward, error: 0x:14", ["aten::add.out", "aten::avg_pool3d.out"], ["aten::add.out"],
     "it needs aten::avg_pool3d.out, which it does not register (error 0x14, OperatorMissing)"),
    ("Failed to load method forward, error: 0x14\nmore", [], [],
     "Failed to load method forward, error: 0x14 (OperatorMissing)"),
    ("Failed to load method forward, error: 0x23", ["aten::add.out"], [],
     "Failed to load method forward, error: 0x23 (InvalidProgram)"),
    ("something else", ["aten::add.out"], [], "something else"),
])
def test_reason(message, needed, registered, expected):
    assert runtime_errors.reason(message, needed, registered) == expected
