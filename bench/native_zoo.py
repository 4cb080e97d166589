"""The zoo's native latency table: runs every benchmark in ZOO_BENCHMARKS (bench/BUILD) and
prints one Markdown row per program, docs/performance.md's "Native latency" table.

    ./bazelw run //bench:native_zoo

Each executorch_benchmark times its method in ExecuTorch's native runtime and then, in the same
run, in the Python runtime on the same inputs; the last column is that ratio. Run it on a quiet
machine: nothing here is asserted, the figures are only printed. An arm64 runner's figures are
emulated (qemu), not latency: the table refuses them.
"""

import json
import os
import subprocess
import sys
import tempfile

from runfiles import Runfiles

COLUMNS = ("program", "method", "load ms", "first call ms", "p50 ms", "p90 ms", "planned KiB", "peak RSS MiB",
           "Python p50 ms", "Python / native")


def row(label, report):
    """One Markdown row from a benchmark's JSON report."""
    method, figures = next(iter(report["methods"].items()))
    python = report.get("python") or {}
    cells = [f"`{label}`", method, f"{report['load_ms']:.1f}", f"{report['first_call_ms']:.2f}",
             f"{figures['p50_ms']:.3f}", f"{figures['p90_ms']:.3f}", f"{figures['planned_bytes'] / 1024:,.0f}",
             f"{report['peak_rss_kb'] / 1024:.1f}"]
    if "p50_ms" in python:
        cells += [f"{python['p50_ms']:.3f}", f"{python['over_native_p50']:.2f}x"]
    else:
        cells += ["-", "-"]
    return "| " + " | ".join(cells) + " |"


def main(argv):
    runfiles = Runfiles.Create()
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    with tempfile.TemporaryDirectory(prefix="native-zoo-") as folder:
        for label in argv:
            package, name = label.lstrip("/").split(":")
            script = runfiles.Rlocation(f"rules_torch_export/{package}/{name}")
            report_path = os.path.join(folder, "report.json")
            print(f"timing {label} ...", file=sys.stderr)
            result = subprocess.run([script, "--json", report_path], capture_output=True, text=True,
                                    env=dict(os.environ, **runfiles.EnvVars()))
            if result.returncode != 0:
                print(result.stderr[-2000:], file=sys.stderr)
                return f"{label} failed"
            with open(report_path, encoding="utf-8") as f:
                report = json.load(f)
            if report.get("emulated"):  # an arm64 runner under qemu: its times are no latency
                return f"{label} times an arm64 runner under qemu; the table holds latencies: remove it from ZOO_BENCHMARKS"
            lines.append(row(label.replace(".benchmark", ""), report))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
