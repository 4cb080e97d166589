"""A program's calls in ExecuTorch's native runtime: numerics_test runs them in the native runner
(//native:et_runner, or a runner that links an app's own kernels) as well as in the Python
runtime, and compares both with the same reference.

All of a test's calls go to one runner process, in order, on one loaded program, so stateful
steps share their buffers as they do in an app.
"""

import os
import subprocess
import tempfile

from exporter.checks import etvals


class NativeError(Exception):
    """The runner refused the program or a call; the message is its one-line reason."""


def run_calls(config, calls):
    """[(method, inputs)] -> [outputs] of each call, from one run of config.native_runner."""
    with tempfile.TemporaryDirectory(prefix="native-") as folder:
        command = [os.path.abspath(config.native_runner), config.pte]
        if config.ptd:
            command += ["--data", config.ptd]
        outputs = []
        for index, (method, inputs) in enumerate(calls):
            given, got = os.path.join(folder, f"in{index}.etvals"), os.path.join(folder, f"out{index}.etvals")
            etvals.write(given, list(inputs))
            command += ["--call", f"{method}={given}:{got}"]
            outputs.append(got)
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            lines = [line for line in result.stderr.splitlines() if line.startswith("et_runner:")]
            reason = lines[-1] if lines else (result.stderr.strip().splitlines() or [f"exit {result.returncode}"])[-1]
            raise NativeError(reason)
        return [etvals.read(path) for path in outputs]
