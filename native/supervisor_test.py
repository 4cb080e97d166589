"""The native runner's supervisor (native/supervisor.h): a deadline for a program that never
returns, in the runner and in the checks that start it (numerics, generation, profile)."""

import os
import subprocess
import sys

import pytest
from runfiles import Runfiles

RUNNER = Runfiles.Create().Rlocation("rules_torch_export/native/et_runner")


@pytest.fixture
def never_returns(tmp_path):
    """A "program" that never finishes loading: a FIFO nobody writes to, so opening it waits forever."""
    path = tmp_path / "stuck.pte"
    os.mkfifo(path)
    return str(path)


def test_a_program_past_its_deadline_is_stopped_in_one_line(never_returns):
    """Before: no deadline (an unknown --deadline), and a program that never returned hung the
    runner until Bazel's test timeout."""
    done = subprocess.run([RUNNER, never_returns, "--deadline", "2"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"et_runner: {never_returns} did not finish within its deadline of 2 s (--deadline) "
                           f"and was stopped while "), line


CHECKS = {
    # Each check, started on the stuck program: its runner must stop at a deadline of its own.
    "numerics": "from exporter.checks import native\n"
                "from types import SimpleNamespace as C\n"
                "native.run_calls(C(native_runner=RUNNER, pte=PTE, ptd=None), [])\n",
    "generation": "from exporter.checks import generation\n"
                  "from types import SimpleNamespace as C\n"
                  "generation.native_tokens(C(native_runner=RUNNER, pte=PTE, ptd=None), [1, 2], 2)\n",
    "profile": "import sys\nfrom exporter.checks import profile\n"
               "sys.exit(profile.main([RUNNER, PTE, '-', 'none.etrecord', 'forward', '1', 'none.json']))\n",
}


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_the_checks_give_the_runner_a_deadline_within_the_test_s_timeout(never_returns, check):
    """TEST_TIMEOUT is Bazel's limit for the test; the check's runner stops well before it."""
    code = f"RUNNER, PTE = {RUNNER!r}, {never_returns!r}\n" + CHECKS[check]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TEST_TIMEOUT": "15", "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode != 0
    assert f"et_runner: {never_returns} did not finish within its deadline of " in done.stderr, done.stderr[-2000:]
