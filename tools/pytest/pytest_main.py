"""Runs pytest on the files given as arguments, as a Bazel py_test main.

pytest's "no tests ran" (exit 5) counts as a failure: a test target that runs nothing is broken.
`bazel test --test_filter=EXPR` reaches pytest as `-k EXPR` (Bazel sets TESTBRIDGE_TEST_ONLY);
on a target whose args select cases with `-k` already (a file split into an every-build and a
nightly target), both must hold: pytest keeps only the last `-k`.
"""

import os
import sys

import pytest


def main(argv):
    args = ["-q", "-p", "no:cacheprovider", "--import-mode=importlib", "-W", "ignore::DeprecationWarning"]
    junit = os.environ.get("XML_OUTPUT_FILE")
    if junit:
        args += ["--junitxml", junit]
    test_filter = os.environ.get("TESTBRIDGE_TEST_ONLY")
    if test_filter:
        argv = with_filter(argv, test_filter)
    code = pytest.main(args + argv)
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        print("pytest_main: no tests ran; a test target must run at least one test", file=sys.stderr)
        return 1
    return int(code)


def with_filter(argv, test_filter):
    """argv with test_filter joined to its `-k` expression, or added as one."""
    if "-k" not in argv[:-1]:
        return ["-k", test_filter] + argv
    at = argv.index("-k") + 1
    return argv[:at] + [f"({argv[at]}) and ({test_filter})"] + argv[at + 1:]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
