"""A program's calls in ExecuTorch's native runtime: numerics_test runs them in the native runner
(//native:et_runner, or a runner that links an app's own kernels) as well as in the Python
runtime, and compares both with the same reference; with "arm64" in its runtimes, once more in
that runner built for aarch64, started through its qemu launcher (rules/private/arm64_binary.bzl).

All of a test's calls go to one runner process, in order, on one loaded program, so stateful
steps share their buffers as they do in an app.
"""

import errno
import os
import subprocess
import tempfile
import time

# When this check started: a test's timeout (TEST_TIMEOUT) counts from about then.
_STARTED = time.monotonic()


def deadline_arguments():
    """The runner's --deadline: what is left of the test's timeout, less a margin for the report
    (or an hour outside a test: `bazel run`). Bazel kills a test at its timeout without a word of
    why; a program that never returns ends first, in one line naming it (native/supervisor.h)."""
    timeout = int(os.environ.get("TEST_TIMEOUT", "0") or 0)
    if timeout <= 0:
        return ["--deadline", "3600"]
    left = timeout - (time.monotonic() - _STARTED) - max(10, timeout // 10)
    return ["--deadline", str(max(1, int(left)))]


class NativeError(Exception):
    """The runner refused the program or a call; the message is its one-line reason."""


def _start(command):
    """subprocess.run(command); a runner built for another CPU is a NativeError, not an OSError."""
    try:
        return subprocess.run(command, capture_output=True, text=True)
    except OSError as e:
        if e.errno != errno.ENOEXEC:
            raise
        # `bazel test --platforms=//platforms:linux_aarch64` builds the test's runner for aarch64
        # too, and the test still runs here.
        raise NativeError(f"{command[0]} is not a program for this machine's CPU (built with --platforms for "
                          f"another one?); run tests without --platforms: numerics_test builds its arm64 "
                          f"runner itself (runtimes = [..., \"arm64\"])") from None


def run_calls(config, calls, runner=None, files=None):
    """[(method, inputs)] -> [outputs] of each call, from one run of `runner` (default
    config.native_runner). files writes and reads the value files: checks.etvals (torch
    tensors, the default) or formats.value_file (numpy, numerics_test's)."""
    if files is None:
        from exporter.checks import etvals

        files = etvals
    with tempfile.TemporaryDirectory(prefix="native-") as folder:
        command = [os.path.abspath(runner or config.native_runner), config.pte, *deadline_arguments()]
        if config.ptd:
            command += ["--data", config.ptd]
        outputs = []
        for index, (method, inputs) in enumerate(calls):
            given, got = os.path.join(folder, f"in{index}.etvals"), os.path.join(folder, f"out{index}.etvals")
            files.write(given, list(inputs))
            command += ["--call", f"{method}={given}:{got}"]
            outputs.append(got)
        result = _start(command)
        if result.returncode != 0:
            lines = [line for line in result.stderr.splitlines() if line.startswith(("et_runner:", "rules_torch_export:"))]
            reason = lines[-1] if lines else (result.stderr.strip().splitlines() or [f"exit {result.returncode}"])[-1]
            raise NativeError(reason)
        return [files.read(path) for path in outputs]
