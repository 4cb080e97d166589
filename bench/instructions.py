"""Instructions against time, across the zoo: how far callgrind's instruction counts (what
program_budget_test's max_instructions gates) predict the native runner's wall-clock p50 on this
machine, and what a count costs (docs/performance.md, "Instruction counts").

    ./bazelw run //bench:instructions [-- --runs 5 --iterations 20]

For each program in ZOO_INSTRUCTIONS (bench/BUILD) and each method that takes inputs: the
method's instructions per call, counted `--runs` times by the InstructionCount action's own code
(exporter/actions/instructions.py: one thread, synthetic inputs at the largest shapes) with
their spread; each callgrind run's wall and CPU seconds; then the p50 of `--iterations` timed
calls of the same runner on the same inputs and thread (`et_runner --bench --one-thread`) and
the nanoseconds per instruction. Last, the correlation of log(instructions) with log(p50).
Nothing is asserted: the figures are printed for the docs.
"""

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time

from exporter.actions import instructions
from exporter.formats import pte_inspect


def methods_with_inputs(pte):
    """The program's methods that take inputs (an llm_program's constant methods take none)."""
    program = pte_inspect.read_program(pte_inspect.read_file(pte))
    return [plan.name for plan in program.execution_plan if len(plan.inputs)]


def _label(pte):
    package, name = os.path.split(os.path.splitext(pte)[0])
    return f"//{package}:{name}"


def counted(args, pte, ptd, methods):
    """([counts of each run], [(wall s, CPU s) of each run], the CPU the runner saw)."""
    runs, costs, cpu = [], [], None
    for _ in range(args.runs):
        before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
        found, report = instructions.count(args.callgrind, args.runner, pte, methods, _label(pte), ptd)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        runs.append(found)
        costs.append((time.monotonic() - start, cpu_s))
        cpu = report.get("cpu")
    return runs, costs, cpu


def timed(args, pte, ptd, methods):
    """{method: p50 ms} of the runner's --bench, one thread, on the same synthetic inputs."""
    command = [os.path.abspath(args.runner), pte, "--one-thread", "--bench", "--warmup", "3",
               "--iterations", str(args.iterations)] + [a for m in methods for a in ("--call", m)]
    command += ["--data", ptd] if ptd else []
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    report = json.loads(result.stdout.strip().splitlines()[-1])
    return {m: report["methods"][m]["p50_ms"] for m in methods}


def spread_percent(values):
    return (max(values) - min(values)) * 100.0 / min(values) if min(values) else 0.0


def rows(args, pte):
    """The table's rows of one program, and its (instructions, p50 ms) points."""
    ptd = os.path.splitext(pte)[0] + ".ptd"
    ptd = ptd if os.path.exists(ptd) else None
    methods = methods_with_inputs(pte)
    runs, costs, cpu = counted(args, pte, ptd, methods)
    p50 = timed(args, pte, ptd, methods)
    wall, cpu_s = statistics.median(c[0] for c in costs), statistics.median(c[1] for c in costs)
    lines, points = [], []
    for method in methods:
        values = [run["methods"][method] for run in runs]
        median = statistics.median(values)
        points.append((median, p50[method]))
        lines.append(f"| `{_label(pte)}` | {method} | {median:,.0f} | {spread_percent(values):.4f} | "
                     f"{runs[0]['load']:,} | {p50[method]:.3f} | {p50[method] * 1e6 / median:.2f} | "
                     f"{wall:.1f} | {cpu_s:.1f} |")
    return lines, points, cpu


def correlation(points):
    """Pearson's r of log(instructions) and log(p50 ms)."""
    xs, ys = [math.log(x) for x, _ in points], [math.log(y) for _, y in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return cov / math.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runner")
    parser.add_argument("callgrind")
    parser.add_argument("programs", nargs="+")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args(argv)
    table = ["| program | method | instructions per call | spread % | loading | p50 ms | ns per instruction | "
             "callgrind wall s | callgrind CPU s |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    points, cpu = [], None
    for pte in [p for p in args.programs if p.endswith(".pte")]:
        print(f"counting {_label(pte)} ...", file=sys.stderr)
        lines, found, cpu = rows(args, pte)
        table += lines
        points += found
    print("\n".join(table))
    print(f"\n{args.runs} callgrind runs per program; the runner saw the CPU {cpu}; p50 of {args.iterations} "
          f"calls, one thread. log(instructions) against log(p50): r = {correlation(points):.3f} over "
          f"{len(points)} methods.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
