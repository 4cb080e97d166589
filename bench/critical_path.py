"""Where a clean build's time goes: Bazel's start and analysis, each worker's warm-up, each
action, and the cores left idle, from Bazel's --profile and the workers' own logs.

    report = critical_path.read(profile_path, output_base, launched_at)
    print(critical_path.format_report(report, cores=2))

The workers write "<prefix> <command> <process start> <warm-up end>" (seconds since the epoch,
exporter/driver/worker.py) to their logs in <output_base>/bazel-workers/; the profile counts
microseconds from the command's start, which is launched_at (the epoch time just before the
bazel client ran) plus the profile's "Launch Blaze" phase.
"""

import collections
import glob
import json
import os

from exporter.driver.worker import WARM_UP_LOG_PREFIX

# Actions shorter than this (config writes, symlinks) are left out of the listing.
LISTED_ACTION_SECONDS = 0.2

Span = collections.namedtuple("Span", "start end what")
Report = collections.namedtuple("Report", "analysed done actions warm_ups critical_path")


def _phases(events):
    marks = {e["name"]: e for e in events if e.get("cat") == "build phase marker"}
    launch = marks.get("Launch Blaze", {}).get("dur", 0) / 1e6
    return launch, marks["Build artifacts"]["ts"] / 1e6, marks["Complete build"]["ts"] / 1e6


def worker_warm_ups(output_base, command_started_at):
    """[Span(process start, warm-up end, "<mnemonic> worker")] in profile seconds, from the logs."""
    spans = []
    for path in sorted(glob.glob(os.path.join(output_base, "bazel-workers", "*.log"))):
        mnemonic = os.path.basename(path)[:-len(".log")].rsplit("-", 1)[-1]
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [line.split() for line in f if line.startswith(WARM_UP_LOG_PREFIX)]
        if lines:  # the last start of that worker
            start, end = float(lines[-1][-2]), float(lines[-1][-1])
            spans.append(Span(start - command_started_at, end - command_started_at, f"{mnemonic} worker"))
    return spans


def read(profile_path, output_base, launched_at):
    with open(profile_path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    launch, analysed, done = _phases(events)
    actions = sorted(
        Span(e["ts"] / 1e6, (e["ts"] + e["dur"]) / 1e6, e["name"])
        for e in events if e.get("cat") == "action processing" and e.get("ph") == "X"
    )
    critical = [Span(e["ts"] / 1e6, (e["ts"] + e["dur"]) / 1e6, e["name"])
                for e in events if e.get("cat") == "critical path component"]
    warm_ups = worker_warm_ups(output_base, launched_at + launch)
    return Report(analysed, done, actions, warm_ups, sorted(critical))


def idle_seconds(actions, cores, start, end):
    """Core-seconds between start and end during which fewer than `cores` actions ran."""
    edges = sorted({start, end} | {t for a in actions for t in (a.start, a.end) if start < t < end})
    idle = 0.0
    for left, right in zip(edges, edges[1:]):
        running = sum(1 for a in actions if a.start <= left and a.end >= right)
        idle += max(0, cores - running) * (right - left)
    return idle


def format_report(report, cores):
    work = [a for a in report.actions if a.end - a.start >= LISTED_ACTION_SECONDS]
    execution = report.done - report.analysed
    lines = [
        f"critical-path report: {report.done:.1f} s from the command's start",
        f"  Bazel start, loading and analysis   0.0 to {report.analysed:.1f} s",
        f"  execution                           {report.analysed:.1f} to {report.done:.1f} s: "
        f"{idle_seconds(report.actions, cores, report.analysed, report.done):.1f} of "
        f"{cores * execution:.1f} core-seconds idle",
        "  worker warm-ups (process start to warm), with the core-seconds idle beside them:",
    ]
    for w in report.warm_ups:
        idle = idle_seconds(report.actions, cores, w.start, w.end)
        lines.append(f"    {w.what:<32} {w.start:6.1f} to {w.end:6.1f} s ({w.end - w.start:4.1f} s), idle beside it {idle:4.1f}")
    lines.append(f"  actions of {LISTED_ACTION_SECONDS} s or more (start, end, seconds):")
    lines += [f"    {a.start:6.1f} {a.end:6.1f} {a.end - a.start:6.1f}  {a.what}" for a in work]
    lines.append("  Bazel's critical path:")
    lines += [f"    {a.start:6.1f} {a.end - a.start:6.1f}  {a.what}" for a in report.critical_path
              if a.end - a.start >= LISTED_ACTION_SECONDS]
    return "\n".join(lines)


def warm_up_seconds(report):
    """The workers' warm-ups, summed: what one process would pay once, serially."""
    return sum(w.end - w.start for w in report.warm_ups)
