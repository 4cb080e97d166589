"""Hostile files: seeded mutants of zoo .pte, .ptd, .etvals, .pt2 and .bpte files through the
native runner (//native:et_runner) and the Python readers of build outputs. None may die by a
signal or hang, and every failure must be one line that names the file: the runner's one
`et_runner: ...` line on stderr, a reader's core.errors.BadFile. The runner's supervisor
(native/supervisor.h) turns a crash inside ExecuTorch into such a line; those are counted apart
("crash contained"), and `--test_env=ET_RUNNER_UNSUPERVISED=1` shows them as the signals they are.

Each kind of file is one test; its table row says which file is mutated, how many mutants,
and how the native runner is given a mutant (a .pt2 and a .bpte are read by Python only).
The counts are printed (`bazel test --test_output=all`); a failure lists the first offenders.
A row's planted mutants hold Python where torch evaluates a .pt2's text or writes it into code
(mutants.planted): each must be refused, and none may create its marker.
"""

import collections
import concurrent.futures
import dataclasses
import json
import os
import subprocess
import sys

import pytest
import torch
from runfiles import Runfiles

from exporter.checks import etvals
from tests.hostile import mutants

RUNFILES = Runfiles.Create()
HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER_TIMEOUT_S = 60


def _path(relative):
    return RUNFILES.Rlocation("rules_torch_export/" + relative)


GRU = _path("models/gru/gru_pte.pte")
MOBILENET_V1 = _path("models/mobilenet/mobilenet_external_v1.pte")


@dataclasses.dataclass(frozen=True)
class Case:
    kind: str                 # the file's kind, also read_probe.py's reader
    source: str               # the valid file the mutants come from (None: written by the test)
    count: int                # how many mutants
    native: object = None     # (mutant, scratch folder) -> the runner's arguments, or None
    seed_base: int = 0        # seeds are seed_base + 0 .. count - 1
    planted: int = 0          # and so many with Python planted (mutants.planted), seeds after those


CASES = [
    Case("pte", "models/gru/gru_pte.pte", 150, lambda m, tmp: [m, "--call", "forward"], 0),
    Case("ptd", "models/mobilenet/mobilenet_external_v1.ptd", 100,
         lambda m, tmp: [MOBILENET_V1, "--data", m, "--call", "forward"], 10_000),
    Case("etvals", None, 100,
         lambda m, tmp: [GRU, "--call", f"forward={m}:{m}.out.etvals"], 20_000),
    Case("pt2", "models/cond/cond_ep.pt2", 100, None, 30_000, planted=60),
    Case("bpte", "models/mobilenet/mobilenet_external_bundle.bpte", 60, None, 40_000),
]


def _source_bytes(case, folder):
    if case.source:
        with open(_path(case.source), "rb") as f:
            return f.read()
    path = os.path.join(folder, "gru_inputs.etvals")  # 2 token windows and their masks, for the GRU
    tokens = torch.arange(16, dtype=torch.long).reshape(2, 8) % 7
    etvals.write(path, [tokens, tokens > 0])
    with open(path, "rb") as f:
        return f.read()


def _write_mutants(case, data, folder):
    """[(path, kind of damage)]; the valid file comes first, as mutant -1. Planted code creates
    <folder>/markers/<seed>."""
    written = []
    os.makedirs(os.path.join(folder, "markers"))
    for seed in [None] + [case.seed_base + i for i in range(case.count + case.planted)]:
        if seed is None:
            damage, raw = "none", data
        elif seed >= case.seed_base + case.count:
            damage, raw = mutants.planted(data, os.path.join(folder, "markers", str(seed)), seed)
        else:
            damage, raw = mutants.mutant(data, seed)
        path = os.path.join(folder, f"{case.kind}_{'valid' if seed is None else seed}.{case.kind}")
        with open(path, "wb") as f:
            f.write(raw)
        written.append((path, damage))
    return written


def _native_outcome(case, path, folder):
    command = [_path("native/et_runner")] + case.native(path, folder)
    try:
        result = subprocess.run(command, capture_output=True, text=True, errors="replace",
                                timeout=RUNNER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "hang", f"no answer in {RUNNER_TIMEOUT_S} s"
    lines = result.stderr.strip().splitlines()
    if result.returncode < 0:
        return "signal", f"signal {-result.returncode}; stderr ends {lines[-2:]}"
    if result.returncode == 0:
        return "ok", ""
    one = (result.returncode == 1 and len(lines) == 1 and lines[0].startswith("et_runner: ")
           and os.path.basename(path) in lines[0])
    if one and lines[0].startswith("et_runner: the runtime crashed"):  # native/supervisor.h caught it
        return "one line, crash contained", lines[0]
    return ("one line" if one else "not one line"), " | ".join(lines[-4:])


def _python_outcomes(kind, paths):
    """{path: (outcome, message)} from read_probe.py, restarted after a death by signal."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    results, todo = {}, list(paths)
    while todo:
        probe = subprocess.run([sys.executable, os.path.join(HERE, "read_probe.py"), kind] + todo,
                               capture_output=True, text=True, env=env, timeout=600)
        started = None
        for line in probe.stdout.splitlines():
            record = json.loads(line)
            if "begin" in record:
                started = record["begin"]
            else:
                results[todo[record["index"]]] = (record["outcome"], record["message"])
                started = None
        if probe.returncode == 0 and started is None and len(results) >= len(paths):
            break
        if started is None:  # died before or between files: a broken probe, not a mutant
            raise AssertionError(f"read_probe.py {kind} exited {probe.returncode}: {probe.stderr[-2000:]}")
        how = f"signal {-probe.returncode}" if probe.returncode < 0 else f"exit {probe.returncode}"
        results[todo[started]] = ("signal" if probe.returncode < 0 else "traceback",
                                  f"{how}: {probe.stderr.strip()[-300:]}")
        todo = todo[started + 1:]
    return results


@pytest.mark.parametrize("case", CASES, ids=[c.kind for c in CASES])
def test_mutants_fail_in_one_line_and_never_by_a_signal(case, tmp_path):
    written = _write_mutants(case, _source_bytes(case, str(tmp_path)), str(tmp_path))
    paths = [p for p, _ in written]
    tallies, offenders = {}, []
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        chunks = [paths[0::2], paths[1::2]]
        python = [pool.submit(_python_outcomes, case.kind, chunk) for chunk in chunks]
        native = {p: pool.submit(_native_outcome, case, p, str(tmp_path)) for p in paths} if case.native else {}
        outcomes = {"python": {}, "native": {p: f.result() for p, f in native.items()}}
        for f in python:
            outcomes["python"].update(f.result())
    damage = dict(written)
    for tool, found in outcomes.items():
        if not found:
            continue
        tallies[tool] = collections.Counter(("planted, " if damage[path].startswith("planted") else "") + outcome
                                            for path, (outcome, _) in found.items() if path != paths[0])
        bad = []
        for path, (outcome, message) in sorted(found.items()):
            if path == paths[0] and outcome != "ok":
                bad.insert(0, f"{tool}: the valid {case.kind} fails: {message}")
            elif outcome not in ("ok", "one line", "one line, crash contained"):
                bad.append(f"{tool} {outcome}: {os.path.basename(path)} ({damage[path]}): {message[:300]}")
            elif damage[path].startswith("planted") and outcome != "one line":
                bad.append(f"{tool} {outcome}, not refused: {os.path.basename(path)} ({damage[path]})")
        bad.sort(key=lambda line: " signal: " not in line and " hang: " not in line)  # the worst first
        offenders += bad[:8] + ([f"{tool}: ... and {len(bad) - 8} more"] if len(bad) > 8 else [])
    ran = sorted(os.listdir(tmp_path / "markers"))
    offenders += [f"planted code ran in {len(ran)} mutants: {', '.join(ran[:8])}"] if ran else []
    summary = f"{case.kind}: {case.count} mutants (and {case.planted} planted) of {case.source or 'a GRU input file'}; " + "; ".join(
        f"{tool} {dict(sorted(t.items()))}" for tool, t in tallies.items())
    print(summary)
    assert not offenders, summary + "\n" + "\n".join(offenders)
