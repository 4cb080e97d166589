"""bench/critical_path.py on a made-up profile: phases, idle cores, warm-ups aligned from logs."""

import json

from bench import critical_path
from exporter.driver.worker import WARM_UP_LOG_PREFIX

LAUNCHED_AT = 1000.0  # epoch seconds; the command starts 0.5 s later ("Launch Blaze")


def _action(name, start, end):
    return {"cat": "action processing", "name": name, "ph": "X", "ts": start * 1e6, "dur": (end - start) * 1e6}


def _write(tmp_path):
    events = [
        {"cat": "build phase marker", "name": "Launch Blaze", "ph": "X", "ts": -500000, "dur": 500000},
        {"cat": "build phase marker", "name": "Build artifacts", "ph": "i", "ts": 2e6},
        {"cat": "build phase marker", "name": "Complete build", "ph": "i", "ts": 12e6},
        _action("Warming up the exporter's ExecuTorchLower worker", 2, 8),
        _action("Exporting //a:a_ep", 2, 4),  # then one core idles from 4 to 8
        _action("Lowering //a:a_pte", 8, 12),  # alone: one core idles from 8 to 12
        {"cat": "critical path component", "name": "action 'Lowering //a:a_pte'", "ph": "X", "ts": 8e6, "dur": 4e6},
    ]
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"traceEvents": events}))
    workers = tmp_path / "bazel-workers"
    workers.mkdir()
    # Worker processes started 2.1 s into the command; the lowering one was warm 5.9 s later.
    (workers / "multiplex-worker-1-ExecuTorchLower.log").write_text(
        f"noise\n{WARM_UP_LOG_PREFIX} lower {LAUNCHED_AT + 2.6} {LAUNCHED_AT + 8.5}\n")
    (workers / "multiplex-worker-2-TorchExport.log").write_text(
        f"{WARM_UP_LOG_PREFIX} export {LAUNCHED_AT + 2.6} {LAUNCHED_AT + 3.5}\n")
    return critical_path.read(str(profile), str(tmp_path), LAUNCHED_AT)


def test_phases_actions_and_warm_ups(tmp_path):
    report = _write(tmp_path)
    assert (report.analysed, report.done) == (2.0, 12.0)
    assert [a.what for a in report.actions][:2] == ["Exporting //a:a_ep", "Warming up the exporter's ExecuTorchLower worker"]
    warm = {w.what: (round(w.start, 3), round(w.end, 3)) for w in report.warm_ups}
    assert warm == {"ExecuTorchLower worker": (2.1, 8.0), "TorchExport worker": (2.1, 3.0)}
    assert round(critical_path.warm_up_seconds(report), 3) == 6.8


def test_idle_cores(tmp_path):
    report = _write(tmp_path)
    # 2 to 4: both busy; 4 to 8: one idle (4 s); 8 to 12: one idle (4 s).
    assert critical_path.idle_seconds(report.actions, 2, 2, 12) == 8.0
    assert critical_path.idle_seconds(report.actions, 2, 2, 4) == 0.0
    text = critical_path.format_report(report, 2)
    assert "8.0 of 20.0 core-seconds idle" in text
    lower = next(line for line in text.splitlines() if "ExecuTorchLower worker " in line)
    assert "idle beside it  4.0" in lower, text  # 4 to 8, within its 2.1 to 8.0
    assert "Lowering //a:a_pte" in text.split("Bazel's critical path:")[1]
