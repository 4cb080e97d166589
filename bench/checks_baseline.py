"""Row (a) of the test-cost benchmark (bench/test_cost.py): the script the zoo's numerics and
snapshot tests replace, one cold Python process that imports torch and ExecuTorch once and then
checks every program the tests check, in turn, with the tests' own runners and configs.

Usage: python checks_baseline.py RUNFILES_DIR:CONFIG...   (each test's runfiles root, and its
config's path there)

Each check runs in its test's runfiles root, as `bazel test` runs it, on the config without the
files the tests' build actions wrote (values, values_data, text), so the runner computes them
itself: the reference's and the Python runtime's outputs, or the snapshot's text. The native
runners run as in the tests. Prints one line per test (ok or FAIL) and the seconds of the import.
"""

import dataclasses
import os
import sys
import time

# The fields a test reads the build action's files from; without them the runner computes.
BUILT = ("values", "values_data", "text")


def check(runfiles, config_path):
    """(ok, report) of one test's check, run in its runfiles root."""
    from exporter.checks import contract, golden, numerics, steps

    os.chdir(runfiles)  # model import roots are made absolute from here, as in the test
    import json

    with open(config_path, encoding="utf-8") as f:
        data = {key: value for key, value in json.load(f).items() if key not in BUILT}
    if "golden" in data and "subject" in data:  # a graph_snapshot_test's
        return golden.run(contract.SnapshotConfig.from_json(data))
    config = contract.NumericsConfig.from_json(data)
    return (steps.run if config.steps else numerics.run)(dataclasses.replace(config))


def main(argv):
    start = time.monotonic()
    import torch  # noqa: F401  (the one import the script pays)
    import executorch.exir  # noqa: F401
    from executorch.runtime import Runtime

    Runtime.get()
    print(f"import {time.monotonic() - start:.3f}", flush=True)
    failed = 0
    for item in argv:
        runfiles, _, config = item.partition(":")
        ok, report = check(runfiles, config)
        print(f"{'ok' if ok else 'FAIL'} {config}", flush=True)
        if not ok:
            failed += 1
            print(report, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, os.environ["RULES_TORCH_EXPORT_ROOT"])
    sys.exit(main(sys.argv[1:]))
