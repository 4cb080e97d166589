"""Where a program's time goes in ExecuTorch's native runtime (`bazel run <program>.profile`,
executorch_profile): the native runner runs the method with an ETDump, and ExecuTorch's
Inspector reads it with the program's ETRecord, which maps delegate events to edge operators.

Prints one row per event (an operator outside delegates, or one of a delegate's own operators),
its milliseconds per run and share of Method::execute, then each delegate's share. With
`--report=FILE` it also writes the program's report with this run's times in its Native time
section and in each operator's details (reports/report.py, from the ETDump itself).

    profile RUNNER PTE PTD|- ETRECORD METHOD ITERATIONS REPORT_CONFIG [--report=FILE]
"""

import collections
import json
import os
import subprocess
import sys
import tempfile

from exporter.checks import native
from exporter.core.errors import BadFile
from exporter.formats import archives


def table(inspector):
    """The report's lines from an Inspector."""
    rows, delegates = collections.OrderedDict(), collections.Counter()
    execute_ms, runs = 0.0, 1
    for block in inspector.event_blocks:
        for event in block.events:
            if event.perf_data is None:
                continue
            total = sum(event.perf_data.raw)
            if event.name == "Method::execute":
                execute_ms += total
                runs = max(runs, len(event.perf_data.raw))
            elif event.name == "DELEGATE_CALL":  # around the delegate's own events
                delegates[event.delegate_backend_name or "delegate"] += total
            elif event.name in ("OPERATOR_CALL", "Program::load_method", "Method::init"):
                continue  # OPERATOR_CALL wraps each native_call_ event; the others are loading
            else:
                where = event.delegate_backend_name or ("kernels" if event.name.startswith("native_call_") else "delegate")
                row = rows.setdefault((where, event.name), [0.0, sorted(set(event.op_types or []))])
                row[0] += total
    if not execute_ms:
        raise ValueError("the ETDump holds no Method::execute event")
    lines = [f"{'where':<16} {'event':<44} {'ms/run':>8} {'share':>6}  edge operators (ETRecord)"]
    for (where, name), (total, ops) in sorted(rows.items(), key=lambda item: -item[1][0]):
        lines.append(f"{where:<16} {name[:44]:<44} {total / runs:>8.3f} {total / execute_ms:>6.1%}  {', '.join(ops)[:60]}")
    lines.append(f"Method::execute: {execute_ms / runs:.3f} ms per run over {runs} runs")
    for backend, total in delegates.most_common():
        lines.append(f"  {backend}: {total / runs:.3f} ms per run = {total / execute_ms:.1%} of Method::execute")
    outside = sum(total for (where, _), (total, _) in rows.items() if where == "kernels")
    lines.append(f"  operators outside delegates: {outside / runs:.3f} ms per run = {outside / execute_ms:.1%}")
    return lines


def write_report(config_path, etdump, method, path):
    """Writes the program's report (the ReportConfig at config_path, runfiles-relative) with the
    times of the ETDump's runs of method to path, relative to where `bazel run` was started."""
    from exporter.actions import registry
    from exporter.reports import report

    with open(config_path, encoding="utf-8") as f:
        data = json.load(f)
    path = os.path.join(os.environ.get("BUILD_WORKING_DIRECTORY", ""), path)
    data.update(identity="", etdump=etdump, etdump_method=method, outputs={"html": path})
    report.run(registry.ReportConfig.from_json(data))
    return path


def main(argv):
    runner, pte, ptd, etrecord, method, iterations, report_config = argv[:7]
    report_to = [a.split("=", 1)[1] for a in argv[7:] if a.startswith("--report=")]
    from executorch.devtools import Inspector

    with tempfile.TemporaryDirectory(prefix="profile-") as folder:
        etdump = os.path.join(folder, "run.etdp")
        command = [os.path.abspath(runner), pte, "--etdump", etdump, *native.deadline_arguments()]
        command += ["--call", method] * int(iterations)
        command += ["--data", ptd] if ptd != "-" else []
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.stderr.write(result.stderr)
            return 1
        try:  # an ETRecord from a cache is hostile: no pickle but weights-only ones (archives.py)
            archives.check_etrecord(etrecord)
            with archives.weights_only():
                inspector = Inspector(etdump_path=etdump, etrecord=etrecord)
        except BadFile as e:
            print(f"profile: {e}", file=sys.stderr)
            return 1
        print(f"{pte}: {method}, {iterations} runs (the first one cold) in the native runtime ({os.path.basename(runner)})")
        print("\n".join(table(inspector)))
        if report_to:
            from exporter.core.errors import UserError

            try:
                print(f"wrote {write_report(report_config, etdump, method, report_to[-1])}")
            except (UserError, OSError) as e:
                print(f"profile: no report: {e}", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
