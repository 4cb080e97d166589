"""What executorch_benchmark runs: one method of a program timed in ExecuTorch's native runtime
(the native runner's --bench) and then, in this process, in ExecuTorch's Python runtime on the
same inputs, so that the report shows what the pybindings add to each call.

    benchmark RUNNER PTE PTD|- METHOD WARMUP ITERATIONS MODE
              [--release=R [--executorch_layer=L | --runtime_python=P]] [IDENTITY...] [--json FILE]

MODE is python, native-only or arm64; IDENTITY the identity files of the backend
package repositories the program needs (core/backend_site.py). With --release, the program is
timed in that ExecuTorch release's runtimes: RUNNER is its native runner, and L the identity file
of its packages, which go first on the import path (core/release_site.py) for the Python runtime,
whose version the report names and checks. A release whose runtimes need another torch (1.3's)
gives instead P, the interpreter of their venv: the Python runtime is timed in a child process
there (core/runtime_process.py), which runs the timing loop itself and reports its version.

Prints the runner's table, then the Python runtime's line with its p50 over the native p50, and
last the whole report as one line of JSON (the runner's figures plus "python"). No figure is a
build output: they depend on the machine's load.

With `arm64` the runner is an arm64_binary: on an x86-64 machine it runs under qemu, so its
figures are emulated, not the device's latency. The report says so above and below the table
and in its JSON ("emulated": true), and sets no Python runtime beside it.
"""

import errno
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

from exporter.core import dtypes, releases, runtime_process


# {ScalarType number: torch's name}, for the synthetic inputs (core/runtime_process.py).
_DTYPE_NAMES = {d.code: d.torch for d in dtypes.TABLE}


class OtherRelease(Exception):
    """The Python runtime that ran is not the release's: the run fails, it does not time it."""


def _check_ran(pte, release, version):
    try:
        releases.check_ran(pte, release, version)
    except ValueError as e:
        raise OtherRelease(str(e)) from None


def python_figures(pte, ptd, method, warmup, iterations, release):
    """(load time, first call and p50/p90/min of `method` in ExecuTorch's Python runtime, in this
    process; its ExecuTorch version, which must be `release`'s)."""
    version = importlib.metadata.version("executorch")
    _check_ran(pte, release, version)
    from executorch.runtime import Runtime

    runtime = Runtime.get()
    start = time.perf_counter()
    program = runtime.load_program(pte, data_path=ptd) if ptd else runtime.load_program(pte)
    loaded = program.load_method(method)
    load_ms = (time.perf_counter() - start) * 1000
    inputs = runtime_process.synthetic_inputs(loaded.metadata, _DTYPE_NAMES)
    return {"load_ms": load_ms, **runtime_process.timed_calls(loaded.execute, inputs, warmup, iterations)}, version


def child_figures(child, pte, ptd, method, warmup, iterations, release):
    """python_figures' figures and version, timed in a runtime_process.ChildRuntime, for a release
    whose runtimes need another torch (core/runtime_process.py): the child loads the program,
    makes the inputs and runs the timing loop, so no figure counts a round trip."""
    child.load(pte, ptd, [method])
    _check_ran(pte, release, child.version)
    return {"load_ms": child.load_ms, **child.time(method, warmup, iterations, _DTYPE_NAMES)}, child.version


def python_line(report, pte, ptd, method, warmup, iterations, release, runtime_python):
    """Times `method` in the Python runtime (this process's, or a child's on runtime_python), prints
    its line and adds its figures to `report` as "python". Raises OtherRelease."""
    where = " in its own venv" if runtime_python else ""
    try:
        if ptd:  # the runtime follows a .ptd's offsets unchecked; a corrupt one fails in one line
            from exporter.formats import pte_inspect

            pte_inspect.summarize_ptd(ptd)
        if runtime_python:
            with runtime_process.ChildRuntime(runtime_python) as child:
                figures, version = child_figures(child, pte, ptd, method, warmup, iterations, release)
        else:
            figures, version = python_figures(pte, ptd, method, warmup, iterations, release)
    except OtherRelease:
        raise
    except Exception as e:  # e.g. a kernel only the app's runner links
        figures = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
        print(f"python runtime{where}: cannot run {method} ({figures['error']})")
    else:
        figures["over_native_p50"] = figures["p50_ms"] / report["methods"][method]["p50_ms"]
        print(f"python runtime (ExecuTorch {version}'s executorch.runtime{where}, same inputs): load "
              f"{figures['load_ms']:.1f} ms, first call {figures['first_call_ms']:.3f} ms, p50 {figures['p50_ms']:.3f} ms = "
              f"{figures['over_native_p50']:.2f}x native p50")
    report["python"] = figures


def emulated_line():
    """What an emulated report says, above and below its table."""
    cpu = os.environ.get("QEMU_CPU", "max,sme=off")
    return (f"EMULATED on qemu (the arm64 runner under qemu-aarch64-static, CPU {cpu}): these times are "
            f"qemu's, not device latency; time the program on an arm64 device (docs/native.md, \"arm64\")")


def runner_report(runner, pte, ptd, method, warmup, iterations):
    """(exit code, the runner's JSON report or None) of one --bench run; prints its table."""
    with tempfile.TemporaryDirectory(prefix="benchmark-") as folder:
        native_json = os.path.join(folder, "native.json")
        command = [os.path.abspath(runner), pte, "--call", method, "--bench", "--table", "--warmup", warmup,
                   "--iterations", iterations, "--json", native_json] + (["--data", ptd] if ptd else [])
        try:
            result = subprocess.run(command, stdout=subprocess.PIPE, text=True)
        except OSError as e:  # built with --platforms for another CPU
            if e.errno != errno.ENOEXEC:
                raise
            print(f"executorch_benchmark: {runner} is not a program for this machine's CPU (built with --platforms "
                  f"for another one?); times come from the machine the runner runs on: benchmark without "
                  f"--platforms", file=sys.stderr)
            return 1, None
        if result.returncode != 0:
            return result.returncode, None
        print("\n".join(result.stdout.splitlines()[:-1]))  # its table; its JSON goes into ours
        with open(native_json, encoding="utf-8") as f:
            return 0, json.load(f)


def _write(report, json_path):
    line = json.dumps(report, sort_keys=True)
    if json_path:
        with open(json_path, "w", encoding="utf-8") as f:
            f.write(line + "\n")
    print(line)


_RELEASE_FLAGS = ("--release=", "--executorch_layer=", "--runtime_python=")


def _release(flags):
    """(--release or None, --runtime_python or None); --executorch_layer's packages go first on
    the import path."""
    options = dict(flag[2:].split("=", 1) for flag in flags)
    if options.get("executorch_layer"):
        from exporter.core import release_site

        release_site.activate(options["executorch_layer"])
    return options.get("release"), options.get("runtime_python")


def main(argv):
    runner, pte, ptd, method, warmup, iterations, python = argv[:7]
    rest = argv[7:]
    json_path = rest[rest.index("--json") + 1] if "--json" in rest else None
    rest = rest[:rest.index("--json")] if "--json" in rest else rest
    release, runtime_python = _release([a for a in rest if a.startswith(_RELEASE_FLAGS)])
    identities = [a for a in rest if not a.startswith("--")]
    ptd = None if ptd == "-" else ptd
    if identities:
        from exporter.core import backend_site

        backend_site.activate(identities)
    emulated = python == "arm64" and platform.machine() not in ("aarch64", "arm64")
    if emulated:
        print(emulated_line())
    code, report = runner_report(runner, pte, ptd, method, warmup, iterations)
    if code:
        return code
    if emulated:
        print(emulated_line())
        report.update(emulated=True, qemu_cpu=os.environ.get("QEMU_CPU", "max,sme=off"))
    if python == "python":
        try:
            python_line(report, pte, ptd, method, int(warmup), int(iterations), release, runtime_python)
        except OtherRelease as e:
            print(f"executorch_benchmark: {e}", file=sys.stderr)
            return 1
    _write(report, json_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
