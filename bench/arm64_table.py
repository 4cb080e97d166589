"""docs/native.md's table of programs on arm64: per program, the largest difference between the
arm64 runner's outputs (under qemu) and the x86-64 runner's, and each one's against the test's
reference, collected from the numerics tests' last outputs.

    ./bazelw test //models/...          # every zoo numerics_test runs on arm64 too
    ./bazelw run //bench:arm64_table

Each numerics_test with "arm64" in its runtimes leaves numerics_differences.json among its
outputs (exporter/checks/differences.py; bazel-testlogs/<package>/<test>/test.outputs/). The
figures are over the cases the arm64 run took, for both CPUs. Last, on stderr: the seconds the
arm64 runs took in all (qemu's start included), what they add to `bazel test //...`.
"""

import json
import os
import re
import sys
import zipfile

SUMMARY_FILE = "numerics_differences.json"  # exporter/checks/differences.py's
COLUMNS = ("program", "test", "arm64 cases", "arm64 vs x86-64", "x86-64 vs reference", "arm64 vs reference",
           "reference")


def summaries(testlogs):
    """Every numerics_differences.json under a bazel-testlogs folder, zipped by Bazel or not."""
    found = []
    for folder, subdirs, files in os.walk(testlogs):
        subdirs.sort()
        if os.path.basename(folder) != "test.outputs":
            continue
        if SUMMARY_FILE in files:
            with open(os.path.join(folder, SUMMARY_FILE), encoding="utf-8") as f:
                found.append(json.load(f))
        elif "outputs.zip" in files:
            with zipfile.ZipFile(os.path.join(folder, "outputs.zip")) as archive:
                if SUMMARY_FILE in archive.namelist():
                    found.append(json.loads(archive.read(SUMMARY_FILE)))
    return found


def _largest(values, cases):
    """The largest of values[case] over cases: "-" when the runtime did not run, "n/c" when a
    case's outputs could not be compared (shapes, dtypes or NaN differ)."""
    picked = [values[case] for case in cases if case in values]
    if not picked:
        return "-"
    if any(v is None for v in picked):
        return "n/c"
    worst = max(picked)
    return "0" if worst == 0 else f"{worst:.1e}"


def _sizes(cases):
    """The arm64 cases as their sizes ("batch=1; batch=2; batch=16"), smallest first, each once."""
    shown = {c.partition(" ")[2] if "=" in c else c for c in cases}
    return "; ".join(sorted(shown, key=lambda size: [int(n) for n in re.findall(r"\d+", size)]))


def row(summary):
    """One Markdown row, or None for a test without an arm64 run."""
    largest = summary["largest_difference"]
    cases = sorted(largest.get("arm64", {}))
    if not cases:
        return None
    steps = summary["method"] == "steps"
    return "| " + " | ".join([
        f"`{summary['program']}`", f"`{summary['test'].rpartition(':')[2]}`",
        f"{len(cases)} steps" if steps else _sizes(cases),
        _largest(largest.get("arm64 vs native", {}), cases), _largest(largest.get("native", {}), cases),
        _largest(largest["arm64"], cases), summary["reference"].partition(" ")[0],
    ]) + " |"


def table(found):
    """The Markdown table, one row per test with an arm64 run, sorted by program."""
    rows = sorted(r for r in (row(s) for s in found) if r)
    return "\n".join(["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)] + rows), len(rows)


def arm64_seconds(found):
    """[(seconds, test)] of the arm64 runs, slowest first."""
    timed = [(s["arm64_seconds"], s["test"]) for s in found if s.get("arm64_seconds") is not None]
    return sorted(timed, reverse=True)


def main(argv):
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY", ".")
    testlogs = argv[0] if argv else os.path.join(workspace, "bazel-testlogs")
    found = summaries(testlogs)
    text, count = table(found)
    if not count:
        return (f"arm64_table: no numerics_test with an arm64 run has outputs under {testlogs}; run "
                f"`bazel test //models/...` first")
    print(text)
    timed = arm64_seconds(found)
    slowest = ", ".join(f"{test} {seconds:.1f} s" for seconds, test in timed[:3])
    print(f"\n{count} tests' outputs from {testlogs}; their arm64 runs took {sum(s for s, _ in timed):.0f} s in "
          f"all (slowest: {slowest})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
