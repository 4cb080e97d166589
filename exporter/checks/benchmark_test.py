"""executorch_benchmark's Python runtime in a child process (core/runtime_process.py), as a release
whose runtimes need another torch (1.3's) times a program, and llm_generation_test's prompts in one
such child: here the child runs on this test's own interpreter, so it is the toolchain's
ExecuTorch, real, on the tiny XNNPACK program and the tiny LLM. One child serves every case (its
start imports torch and ExecuTorch)."""

import importlib.metadata
import os
import sys
import types

import pytest
import torch
from runfiles import Runfiles

from exporter.checks import benchmark, generation
from exporter.core import dtypes, runtime_process
from exporter.tests import built_programs

PTE = built_programs.path("tiny_xnnpack_pte.pte")
DTYPE_NAMES = {d.code: d.torch for d in dtypes.TABLE}
LLM = Runfiles.Create().Rlocation("rules_torch_export/models/llm/tiny_lm_llm.pte")


@pytest.fixture(scope="module")
def child():
    with runtime_process.ChildRuntime(sys.executable) as started:
        yield started


def test_a_load_reports_the_inputs_the_version_and_the_load_time(child):
    assert child.load(PTE, None, ["forward"]) == {"forward": 2}
    assert child.version == importlib.metadata.version("executorch")
    assert child.load_ms > 0


def test_the_child_times_the_calls_itself(child):
    child.load(PTE, None, ["forward"])
    figures = child.time("forward", 1, 5, DTYPE_NAMES)
    assert figures["calls"] == 5
    assert 0 < figures["min_ms"] <= figures["p50_ms"] <= figures["p90_ms"]
    # No call travelled as torch.save files: the parent made none, the folder holds the log only.
    assert child.calls == 0 and os.listdir(child.folder) == ["stderr.txt"]


def test_synthetic_inputs_are_the_native_runners():
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(PTE).load_method("forward")
    x, y = runtime_process.synthetic_inputs(method.metadata, DTYPE_NAMES)
    assert x.shape == (8, 4) and torch.equal(x.flatten(), (torch.arange(32) % 17).float() / 8 - 1)
    assert y.shape == (8,) and y.dtype == torch.int64 and not y.any()


def test_the_benchmark_checks_the_version_the_child_ran(child):
    figures, version = benchmark.child_figures(child, PTE, None, "forward", 0, 2, "1.5")
    assert version == importlib.metadata.version("executorch") and figures["calls"] == 2 and figures["load_ms"] > 0
    with pytest.raises(benchmark.OtherRelease, match="is ExecuTorch 1.5.1, not release 1.4's"):
        benchmark.child_figures(child, PTE, None, "forward", 0, 2, "1.4")


def test_prompts_share_one_child(child):
    config = types.SimpleNamespace(pte=LLM, ptd=None)
    first = generation.child_tokens(child, config, [5, 6, 7], 4, [])
    second = generation.child_tokens(child, config, [5, 6, 7], 4, [])
    assert len(first[0]) == 4 and first[0] == second[0]
    assert first[1] == importlib.metadata.version("executorch")
