"""//native:et_runner_asan, the native runner built with AddressSanitizer, on valid programs (every
mode of the runner, outputs equal to the plain runner's) and on a smaller corpus of the mutation
test's mutants: AddressSanitizer reports nothing, and each failure is one line.

Only the runner's own code is instrumented; ExecuTorch's libraries from the wheel are prebuilt
without AddressSanitizer. (Larger corpora did find reports inside them: a memcpy of overlapping
ranges in the portable slice_copy kernel, faults inside XNNPACK. Those are why the runner has a
supervisor; they are not in this corpus.)
"""

import os
import subprocess

import pytest
import torch
from runfiles import Runfiles

from exporter.checks import etvals
from tests.hostile import mutants

RUNFILES = Runfiles.Create()
ENV = dict(os.environ, ASAN_OPTIONS="allocator_may_return_null=1")  # a huge allocation fails as it does without ASan


def _path(relative):
    return RUNFILES.Rlocation("rules_torch_export/" + relative)


ASAN, PLAIN = _path("native/et_runner_asan"), _path("native/et_runner")
GRU = _path("models/gru/gru_pte.pte")
MOBILENET, MOBILENET_PTD = (_path(f"models/mobilenet/mobilenet_external_v1.{x}") for x in ("pte", "ptd"))
LM = _path("models/llm/tiny_lm_llm.pte")


def _run(runner, *args):
    result = subprocess.run([runner, *map(str, args)], capture_output=True, text=True, errors="replace", env=ENV)
    assert "AddressSanitizer" not in result.stderr, result.stderr[-4000:]
    return result


def _gru_inputs(folder):
    path = folder / "gru_inputs.etvals"
    tokens = torch.arange(16, dtype=torch.long).reshape(2, 8) % 7
    etvals.write(str(path), [tokens, tokens > 0])
    return path


@pytest.mark.parametrize("args", [
    [GRU, "--call", "forward", "--table"],
    [GRU, "--call", "forward", "--bench", "--warmup", "1", "--iterations", "2"],
    [GRU, "--check"],
    ["--kernels"],
    [MOBILENET, "--data", MOBILENET_PTD, "--call", "forward"],
], ids=["call", "bench", "check", "kernels", "ptd"])
def test_valid_programs_run_clean(args):
    result = _run(ASAN, *args)
    assert result.returncode == 0, result.stderr[-2000:]


def test_outputs_equal_the_plain_runners(tmp_path):
    given = _gru_inputs(tmp_path)
    for runner, out in ((ASAN, "asan.etvals"), (PLAIN, "plain.etvals")):
        assert _run(runner, GRU, "--call", f"forward={given}:{tmp_path / out}").returncode == 0
    assert (tmp_path / "asan.etvals").read_bytes() == (tmp_path / "plain.etvals").read_bytes()


def test_generation_equals_the_plain_runners(tmp_path):
    prompt = tmp_path / "prompt.etvals"
    etvals.write(str(prompt), [torch.tensor([5, 17, 42], dtype=torch.long)])
    for runner, out in ((ASAN, "asan.etvals"), (PLAIN, "plain.etvals")):
        result = _run(runner, LM, "--generate", f"forward={prompt}:{tmp_path / out}", "--max-new-tokens", 4)
        assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "asan.etvals").read_bytes() == (tmp_path / "plain.etvals").read_bytes()


# (kind, the file mutated, the runner's arguments for a mutant, the mutation test's seed base)
CORPUS = [
    ("pte", GRU, lambda m, tmp: [m, "--call", "forward"], 0),
    ("ptd", MOBILENET_PTD, lambda m, tmp: [MOBILENET, "--data", m, "--call", "forward"], 10_000),
    ("etvals", None, lambda m, tmp: [GRU, "--call", f"forward={m}:{m}.out"], 20_000),
]


@pytest.mark.parametrize("kind,source,arguments,seed_base", CORPUS, ids=[c[0] for c in CORPUS])
def test_mutants_run_clean_and_fail_in_one_line(tmp_path, kind, source, arguments, seed_base):
    data = open(source, "rb").read() if source else _gru_inputs(tmp_path).read_bytes()
    for seed in range(seed_base, seed_base + 40):
        mutant = tmp_path / f"{seed}.{kind}"
        mutant.write_bytes(mutants.mutant(data, seed)[1])
        result = _run(ASAN, *arguments(mutant, tmp_path))
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 0 or (result.returncode == 1 and len(lines) == 1), (seed, result.stderr[-2000:])


def test_the_runner_is_instrumented():
    """Else every test above would pass without AddressSanitizer watching."""
    result = subprocess.run([ASAN, "--kernels"], capture_output=True, text=True, env=dict(ENV, ASAN_OPTIONS="help=1"))
    assert "Available flags for AddressSanitizer" in result.stderr, result.stderr[:2000]
