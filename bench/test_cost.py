"""What the zoo's numerics and snapshot tests cost, against the script they replace.

    ./bazelw run //bench:test_cost                 every such test under //models
    ./bazelw run //bench:test_cost -- --runs 2     each row twice, interleaved; the table shows means

In a fresh copy of this repository with its own output base (tests/e2e/harness.py), for the
numerics_test and graph_snapshot_test targets of //models that are not manual, it prints:
  (a) one cold Python process that imports torch and ExecuTorch once and checks the same programs
      with the same runners and configs, computing what the tests' build actions compute
      (bench/checks_baseline.py), after the tests' runfiles are built;
  (b) a clean `bazel test` of the tests, less a clean `bazel build` of what they test (their
      programs, exports, models and native runners, the arm64 ones included): the tests' share
      of a clean CI run;
  (c) `bazel test` of the tests right after that clean build, in the same server: the tests
      alone, their build actions included;
and each row's ratio to (a), with the mnemonics that (c) ran. The goal (issue 46): (c) and (b)
<= 1.3 x (a).
"""

import argparse
import collections
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time

from tests.e2e import harness

GOAL = 1.3
TESTS_QUERY = ("kind('^_(numerics|snapshot)_test rule$', //models/...) "
               "except attr(tags, '\\bmanual\\b', //models/...)")
# The attributes through which a test names what it tests (numerics_test, graph_snapshot_test).
SUBJECT_ATTRS = ("program", "exported", "reference_program", "model")
DEPS_PACKAGE = "bench_test_cost"


def _query(ws, expression):
    return sorted(ws.bazel("query", expression, log=False).check().stdout.split())


def write_deps_package(ws, tests):
    """//bench_test_cost:deps: what the tests test (programs, exports, models) and their native
    runners, the arm64 ones built as the tests build them (arm64_binary's transition)."""
    tests_set = "set({})".format(" ".join(tests))
    subjects = []
    for attr in SUBJECT_ATTRS:
        subjects += _query(ws, f"labels({attr}, {tests_set})")
    runners = _query(ws, f"labels(native_runner, {tests_set})")
    arm64 = _query(ws, f"labels(arm64_runner, {tests_set})")
    lines = ['load("//rules:defs.bzl", "arm64_binary")', ""]
    lines += [f'arm64_binary(name = "arm64_{i}", binary = "{label}")' for i, label in enumerate(arm64)]
    names = [f":arm64_{i}" for i in range(len(arm64))] + sorted(set(subjects + runners))
    lines += ["", "filegroup(", '    name = "deps",', "    srcs = ["]
    lines += [f'        "{name}",' for name in names] + ["    ],", ")", ""]
    ws.write(f"{DEPS_PACKAGE}/BUILD", "\n".join(lines))
    return f"//{DEPS_PACKAGE}:deps"


def timed(fn):
    start = time.monotonic()
    result = fn()
    return time.monotonic() - start, result


def clean(ws):
    ws.shutdown()  # the workers start cold in each clean build
    ws.bazel("clean", log=False)


def runfiles_items(ws, tests):
    """RUNFILES_DIR:CONFIG for each test, as checks_baseline.py takes them."""
    bin_dir = os.path.join(ws.path, "bazel-bin")
    items = []
    for label in tests:
        package, name = label[2:].split(":")
        runfiles = os.path.join(bin_dir, package, f"{name}.runfiles", "rules_torch_export")
        items.append(f"{runfiles}:{package}/{name}.config.json")
    return items


def run_baseline(ws, tests):
    """(wall seconds, import seconds) of checks_baseline.py, cold, on the tests' configs."""
    env = dict(os.environ, PYTHONHASHSEED="0", RULES_TORCH_EXPORT_ROOT=ws.path)
    env.pop("TEST_UNDECLARED_OUTPUTS_DIR", None)
    argv = [sys.executable, os.path.join(ws.path, "bench", "checks_baseline.py"), *runfiles_items(ws, tests)]
    seconds, done = timed(lambda: subprocess.run(argv, cwd=ws.path, env=env, capture_output=True, text=True))
    if done.returncode != 0:
        raise RuntimeError(f"the baseline's checks failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    imported = float(done.stdout.split("import ")[1].split()[0])
    return seconds, imported


def measure_once(ws, tests, deps):
    """{row: seconds} of one round: (b)'s two builds, (c), then (a); and (c)'s mnemonics."""
    rows = {}
    clean(ws)
    build, _ = timed(lambda: ws.build(deps, log=False))
    rows["c"], result = timed(lambda: ws.bazel("test", *tests).check())
    ran = collections.Counter(s.get("mnemonic") for s in result.spawns if not s.get("remoteCacheHit"))
    clean(ws)
    test, _ = timed(lambda: ws.bazel("test", *tests, log=False).check())
    rows["b"], rows["build"], rows["test"] = test - build, build, test
    rows["a"], rows["import"] = run_baseline(ws, tests)
    return rows, ran


ROW_NAMES = {
    "a": "one process, one import (baseline)",
    "b": "clean test - clean build of deps",
    "c": "the tests after a clean build",
}


def print_table(count, rounds):
    means = {key: sum(r[key] for r in rounds) / len(rounds) for key in rounds[0]}
    print(f"\n{count} tests; clean build of what they test {means['build']:.1f} s, clean `bazel test` "
          f"{means['test']:.1f} s; the baseline's import {means['import']:.1f} s")
    print(f"{'row':<4} {'what':<36} {'wall s':>8} {'x (a)':>7}  target")
    for key in "abc":
        ratio = means[key] / means["a"]
        target = "" if key == "a" else f"<= {GOAL} x (a): {'met' if ratio <= GOAL else 'MISSED'}"
        runs = " and ".join(f"{r[key]:.1f}" for r in rounds)
        print(f"({key})  {ROW_NAMES[key]:<36} {means[key]:8.2f} {ratio:7.2f}  {target}  (runs: {runs} s)")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="rounds of every row; the table shows means")
    args = parser.parse_args(argv)
    scratch = tempfile.mkdtemp(prefix="rules_torch_export_test_cost_")
    print(f"rules_torch_export test-cost benchmark, {datetime.date.today()}, {platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}; scratch: {scratch}")
    subprocess.run([sys.executable, "-c", "import torch, executorch.exir"], capture_output=True)  # page cache
    ws = harness.Workspace.create("zoo", base=scratch, include=harness.DEFAULT_INCLUDE + ("bench", "models"))
    try:
        tests = _query(ws, TESTS_QUERY)
        deps = write_deps_package(ws, tests)
        rounds, ran = [], None
        for _ in range(args.runs):
            rows, ran = measure_once(ws, tests, deps)
            rounds.append(rows)
        print_table(len(tests), rounds)
        print("(c) ran: " + ", ".join(f"{m} {n}" for m, n in sorted(ran.items()) if m))
    finally:
        ws.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
