"""What the zoo's numerics and snapshot tests cost, against the script they replace.

    ./bazelw run //bench:test_cost                 every such test under //models
    ./bazelw run //bench:test_cost -- --clean-test also row (b), a second clean build
    ./bazelw run //bench:test_cost -- --runs 2     each row twice; the table shows means
    ./bazelw run //bench:test_cost -- --tests //models/gru:gru_numerics_test   (a quick look)

In a fresh copy of this repository with its own output base (tests/e2e/harness.py), for the
numerics_test and graph_snapshot_test targets of //models that are not manual, it prints:
  (a) one cold Python process that imports torch and ExecuTorch once and checks the same programs
      with the same runners and configs, computing what the tests' build actions compute
      (bench/checks_baseline.py), after the tests' runfiles are built;
  (c) `bazel test` of the tests after a clean `bazel build` of what they test (their programs,
      exports, models and native runners, the arm64 ones included), with the workers stopped in
      between: the tests alone, their build actions and one warm-up of the export's worker
      included (as (a) includes its one import);
  (b) with --clean-test: a clean `bazel test` of the tests, less that clean build: the tests'
      share of a clean CI run (noisier: the difference of two long builds);
  (d) each test's check in a cold process of its own, two at a time as Bazel runs tests on two
      cores, computing its values itself: what the tests cost before their build actions
      (the same code; without Bazel's own per-test overhead, so a little under the real cost);
and each row's ratio to (a), with the mnemonics that (c) ran and the slowest tests. The goal
(issue 46): (c) <= 1.3 x (a). --deps-disk-cache PATH builds what the tests test with that disk
cache (the tests themselves never use it), so that a later build can reuse the programs.
"""

import argparse
import collections
import concurrent.futures
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
TIMEOUT = 4 * 3600  # a clean build of the zoo on a busy 2-core machine passes the harness's 20 minutes


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


def _checks(ws, items):
    """checks_baseline.py, cold, on items; its CompletedProcess (failing on a failed check)."""
    env = dict(os.environ, PYTHONHASHSEED="0", RULES_TORCH_EXPORT_ROOT=ws.path)
    env.pop("TEST_UNDECLARED_OUTPUTS_DIR", None)
    argv = [sys.executable, os.path.join(ws.path, "bench", "checks_baseline.py"), *items]
    done = subprocess.run(argv, cwd=ws.path, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the baseline's checks failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return done


def run_baseline(ws, tests):
    """(wall seconds, import seconds) of checks_baseline.py, cold, on every test's config."""
    seconds, done = timed(lambda: _checks(ws, runfiles_items(ws, tests)))
    return seconds, float(done.stdout.split("import ")[1].split()[0])


def run_per_test(ws, tests, jobs=2):
    """Wall seconds of checks_baseline.py once per test, `jobs` processes at a time: row (d)."""
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        seconds, _ = timed(lambda: list(pool.map(lambda item: _checks(ws, [item]), runfiles_items(ws, tests))))
    return seconds


def measure_once(ws, tests, deps, clean_test, disk_cache):
    """{row: seconds} of one round: the clean build, (c), (b) if clean_test, then (a) and (d);
    and the mnemonics (c) ran."""
    rows = {}
    clean(ws)
    cache = [f"--disk_cache={disk_cache}"] if disk_cache else []
    rows["build"], _ = timed(lambda: ws.build(*cache, deps, log=False, timeout=TIMEOUT))
    # Cold workers, as the script starts cold: (c) pays the export worker's warm-up (its imports)
    # once, as (a) pays its import once; Bazel's start and analysis stay out of both.
    ws.shutdown()
    ws.build("--nobuild", *tests, log=False)
    rows["c"], result = timed(lambda: ws.bazel("test", *tests, timeout=TIMEOUT).check())
    ran = collections.Counter(s.get("mnemonic") for s in result.spawns if not s.get("remoteCacheHit"))
    if clean_test:
        clean(ws)
        rows["test"], _ = timed(lambda: ws.bazel("test", *tests, log=False, timeout=TIMEOUT).check())
        rows["b"] = rows["test"] - rows["build"]
    rows["a"], rows["import"] = run_baseline(ws, tests)
    rows["d"] = run_per_test(ws, tests)
    return rows, ran


def slowest_tests(ws, tests, count=8):
    """[(seconds, label)] of the slowest tests of the last `bazel test`, from their test.xml."""
    found = []
    for label in tests:
        package, name = label[2:].split(":")
        path = os.path.join(ws.path, "bazel-testlogs", package, name, "test.xml")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            found.append((float(text.split('time="')[1].split('"')[0]), label))
    return sorted(found, reverse=True)[:count], sum(seconds for seconds, _ in found)


ROW_NAMES = {
    "a": "one process, one import (baseline)",
    "b": "clean test - clean build of deps",
    "c": "the tests after a clean build",
    "d": "before: a cold process per test",
}


def print_table(count, rounds):
    means = {key: sum(r[key] for r in rounds) / len(rounds) for key in rounds[0]}
    clean_test = f", clean `bazel test` {means['test']:.1f} s" if "test" in means else ""
    print(f"\n{count} tests; clean build of what they test {means['build']:.1f} s{clean_test}; "
          f"the baseline's import {means['import']:.1f} s")
    print(f"{'row':<4} {'what':<36} {'wall s':>8} {'x (a)':>7}  target")
    for key in [k for k in "abcd" if k in means]:
        ratio = means[key] / means["a"]
        target = "" if key in "ad" else f"<= {GOAL} x (a): {'met' if ratio <= GOAL else 'MISSED'}"
        runs = " and ".join(f"{r[key]:.1f}" for r in rounds)
        print(f"({key})  {ROW_NAMES[key]:<36} {means[key]:8.2f} {ratio:7.2f}  {target}  (runs: {runs} s)")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="rounds of every row; the table shows means")
    parser.add_argument("--clean-test", action="store_true", help="also row (b): a clean `bazel test`")
    parser.add_argument("--tests", nargs="*", default=None, help="these tests instead of the zoo's")
    parser.add_argument("--deps-disk-cache", default=None, help="a disk cache for the clean build of the deps")
    args = parser.parse_args(argv)
    scratch = tempfile.mkdtemp(prefix="rules_torch_export_test_cost_")
    print(f"rules_torch_export test-cost benchmark, {datetime.date.today()}, {platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}; scratch: {scratch}")
    subprocess.run([sys.executable, "-c", "import torch, executorch.exir"], capture_output=True)  # page cache
    ws = harness.Workspace.create("zoo", base=scratch, include=harness.DEFAULT_INCLUDE + ("bench", "models"))
    ws.jvm_flags = ()  # Bazel's JVM as a user runs it, not the tests' (harness.py)
    try:
        tests = args.tests or _query(ws, TESTS_QUERY)
        deps = write_deps_package(ws, tests)
        rounds, ran = [], collections.Counter()
        for _ in range(args.runs):
            rows, ran = measure_once(ws, tests, deps, args.clean_test, args.deps_disk_cache)
            rounds.append(rows)
        print_table(len(tests), rounds)
        print("(c) ran: " + ", ".join(f"{m} {n}" for m, n in sorted(ran.items()) if m))
        slowest, total = slowest_tests(ws, tests)
        print(f"test times in (b) or (c) (test.xml), {total:.1f} s in all; the slowest: "
              + ", ".join(f"{label} {seconds:.1f} s" for seconds, label in slowest))
    finally:
        ws.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
