"""What executorch_benchmark runs: one method of a program timed in ExecuTorch's native runtime
(the native runner's --bench) and then, in this process, in ExecuTorch's Python runtime on the
same inputs, so that the report shows what the pybindings add to each call.

    benchmark RUNNER PTE PTD|- METHOD WARMUP ITERATIONS MODE [--release=R [--executorch_layer=L]]
              [IDENTITY...] [--json FILE]

MODE is python, native-only or arm64; IDENTITY the identity files of the backend
package repositories the program needs (core/backend_site.py). With --release, the program is
timed in that ExecuTorch release's runtimes: RUNNER is its native runner, and L the identity file
of its packages, which go first on the import path (core/release_site.py) for the Python runtime,
whose version the report names and checks.

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

from exporter.core import releases


def synthetic_inputs(method_meta):
    """The native runner's inputs (et_runner.cc, synthetic_inputs) for ExecuTorch's Python
    runtime: each tensor at its largest shape, floats the pattern (k % 17) / 8 - 1, others 0."""
    import torch

    from exporter.core import dtypes

    inputs = []
    for i in range(method_meta.num_inputs()):
        try:
            meta = method_meta.input_tensor_meta(i)
        except Exception:  # a non-tensor input (an int): the runner passes 0
            inputs.append(0)
            continue
        dtype = getattr(torch, {d.code: d.torch for d in dtypes.TABLE}[meta.dtype()])
        sizes = list(meta.sizes())
        if dtype == torch.float32:
            count = 1
            for size in sizes:
                count *= size
            inputs.append(((torch.arange(count) % 17).float() / 8 - 1).reshape(sizes))
        else:
            inputs.append(torch.zeros(sizes, dtype=dtype))
    return inputs


def _percentile(values, p):  # as the runner computes it
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * (len(ordered) - 1) + 0.5))]


def python_figures(pte, ptd, method, warmup, iterations):
    """Load time, first call and p50/p90/min of `method` in ExecuTorch's Python runtime."""
    from executorch.runtime import Runtime

    if ptd:  # the runtime follows a .ptd's offsets unchecked; a corrupt one fails in one line
        from exporter.formats import pte_inspect

        pte_inspect.summarize_ptd(ptd)
    runtime = Runtime.get()
    start = time.perf_counter()
    program = runtime.load_program(pte, data_path=ptd) if ptd else runtime.load_program(pte)
    loaded = program.load_method(method)
    load_ms = (time.perf_counter() - start) * 1000
    inputs = synthetic_inputs(loaded.metadata)
    times = []
    for _ in range(1 + warmup + iterations):
        start = time.perf_counter()
        loaded.execute(inputs)
        times.append((time.perf_counter() - start) * 1000)
    timed = times[1 + warmup:]
    return {"load_ms": load_ms, "first_call_ms": times[0], "p50_ms": _percentile(timed, 0.5),
            "p90_ms": _percentile(timed, 0.9), "min_ms": min(timed), "calls": len(timed)}


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


def _release(flags):
    """The release of --release and --executorch_layer (its packages first on the import path), or None."""
    options = dict(flag[2:].split("=", 1) for flag in flags)
    if options.get("executorch_layer"):
        from exporter.core import release_site

        release_site.activate(options["executorch_layer"])
    return options.get("release")


def main(argv):
    runner, pte, ptd, method, warmup, iterations, python = argv[:7]
    rest = argv[7:]
    json_path = rest[rest.index("--json") + 1] if "--json" in rest else None
    rest = rest[:rest.index("--json")] if "--json" in rest else rest
    release = _release([a for a in rest if a.startswith(("--release=", "--executorch_layer="))])
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
        native_p50 = report["methods"][method]["p50_ms"]
        version = importlib.metadata.version("executorch")
        try:
            releases.check_ran(pte, release, version)
        except ValueError as e:
            print(f"executorch_benchmark: {e}", file=sys.stderr)
            return 1
        try:
            figures = python_figures(pte, ptd, method, int(warmup), int(iterations))
        except Exception as e:  # e.g. a kernel only the app's runner links
            figures = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
            print(f"python runtime: cannot run {method} ({figures['error']})")
        else:
            figures["over_native_p50"] = figures["p50_ms"] / native_p50
            print(f"python runtime (ExecuTorch {version}'s executorch.runtime, same inputs): load "
                  f"{figures['load_ms']:.1f} ms, first call {figures['first_call_ms']:.3f} ms, p50 {figures['p50_ms']:.3f} ms = "
                  f"{figures['over_native_p50']:.2f}x native p50")
        report["python"] = figures
    _write(report, json_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
