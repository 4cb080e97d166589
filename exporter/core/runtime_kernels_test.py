"""runtime_kernels: the LLM operators' kernels load for a program whose operator table
(pte_inspect.operator_names) calls one, not for the bytes "llama::" anywhere in the file."""

import pytest
import torch

from exporter.core import runtime_kernels
from exporter.core.errors import BadFile
from exporter.formats import pte_inspect


class _CallsCustomSdpa(torch.nn.Module):
    def forward(self, q, k, v):
        return torch.ops.llama.custom_sdpa(q, k, v, 0, None, 0.0, True)


class _HoldsTheNamespaceAsData(torch.nn.Module):
    """A constant whose bytes spell an LLM operator's name; the program calls aten::add only."""

    def __init__(self):
        super().__init__()
        self.register_buffer("spelled", torch.tensor(list(b"llama::custom_sdpa"), dtype=torch.uint8))

    def forward(self, x):
        return x + self.spelled


def _program(tmp_path, module, args):
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (torch.ops.llama for the export)
    from executorch.exir import to_edge

    path = tmp_path / "program.pte"
    path.write_bytes(to_edge(torch.export.export(module, args)).to_executorch().buffer)
    return path


def _calls_llm_ops(path):
    return runtime_kernels.calls_llm_ops(pte_inspect.operator_names(path))


def test_a_program_that_calls_custom_sdpa_needs_the_kernels(tmp_path):
    query = torch.randn(1, 3, 2, 4)
    assert _calls_llm_ops(_program(tmp_path, _CallsCustomSdpa(), (query, query, query)))


def test_the_name_in_a_constant_is_no_call(tmp_path):
    path = _program(tmp_path, _HoldsTheNamespaceAsData(), (torch.zeros(18, dtype=torch.uint8),))
    assert b"llama::" in path.read_bytes()
    assert pte_inspect.operator_names(path) == {"aten::add.out"}
    assert not _calls_llm_ops(path)


def test_a_corrupt_program_fails_in_one_line_naming_it(tmp_path):
    path = _program(tmp_path, _CallsCustomSdpa(), (torch.randn(1, 3, 2, 4),) * 3)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(BadFile, match="program.pte: corrupt"):
        pte_inspect.operator_names(path)
