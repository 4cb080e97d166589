"""executorch_benchmark: //models/gru:gru_pte.benchmark runs the program natively and reports
what docs/performance.md's "Native latency" table shows. No speed is asserted (the machines are
noisy), only that the figures are there and agree with what the build knows: planned memory with
the budget's."""

import json
import subprocess

from runfiles import Runfiles

RUNFILES = Runfiles.Create()


def test_the_benchmark_reports_its_figures(tmp_path):
    benchmark = RUNFILES.Rlocation("rules_torch_export/models/gru/gru_pte.benchmark")
    report = tmp_path / "report.json"
    result = subprocess.run([benchmark, "--json", str(report)], capture_output=True, text=True,
                            env=RUNFILES.EnvVars())
    assert result.returncode == 0, result.stderr
    assert "p50 ms" in result.stdout and "peak RSS" in result.stdout, result.stdout
    figures = json.loads(report.read_text())
    assert json.loads(result.stdout.splitlines()[-1]) == figures
    forward = figures["methods"]["forward"]
    assert forward["calls"] == 20
    assert 0 < forward["min_ms"] <= forward["p50_ms"] <= forward["p90_ms"]
    assert figures["load_ms"] > 0 and figures["first_call_ms"] > 0 and figures["peak_rss_kb"] > 0
    with open(RUNFILES.Rlocation("rules_torch_export/models/gru/gru_pte.budget.json"), encoding="utf-8") as f:
        budget = json.load(f)
    assert forward["planned_bytes"] == budget["figures"]["planned forward"]
    python = figures["python"]  # the same method in ExecuTorch's Python runtime, same run
    assert python["calls"] == 20 and 0 < python["min_ms"] <= python["p50_ms"] <= python["p90_ms"]
    assert python["over_native_p50"] == python["p50_ms"] / forward["p50_ms"]
    assert "x native p50" in result.stdout


def test_a_missing_backend_fails_in_one_line_naming_the_library():
    """//native:et_runner_without_xnnpack lacks the delegate the GRU's program uses. (A missing
    kernel: kernel_coverage_test in models/volumetric.)"""
    runner = RUNFILES.Rlocation("rules_torch_export/native/et_runner_without_xnnpack")
    program = RUNFILES.Rlocation("rules_torch_export/models/gru/gru_pte.pte")
    result = subprocess.run([runner, program, "--call", "forward"], capture_output=True, text=True)
    assert result.returncode == 1
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("et_runner:")]
    assert line == (f"et_runner: {program}: method \"forward\" is delegated to XnnpackBackend, which is not "
                    "registered; link @torch_export_venv//executorch:backend_xnnpack (libexecutorch_backend_xnnpack.so)"), line


def test_a_method_the_program_lacks_is_named_with_the_ones_it_has():
    runner = RUNFILES.Rlocation("rules_torch_export/native/et_runner")
    program = RUNFILES.Rlocation("rules_torch_export/models/gru/gru_pte.pte")
    result = subprocess.run([runner, program, "--call", "decode"], capture_output=True, text=True)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last == f'et_runner: {program} has no method "decode"; its methods: forward, input_schema'



def test_the_profile_names_the_delegates_share_and_each_operator():
    profile = RUNFILES.Rlocation("rules_torch_export/models/gru/gru_pte.profile")
    result = subprocess.run([profile], capture_output=True, text=True, env=RUNFILES.EnvVars())
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[1].split()[:4] == ["where", "event", "ms/run", "share"], lines[:3]
    assert any(line.startswith("XnnpackBackend ") for line in lines), lines
    (execute,) = [line for line in lines if line.startswith("Method::execute: ")]
    assert "over 10 runs" in execute, execute
    (share,) = [line for line in lines if line.startswith("  XnnpackBackend: ")]
    assert "of Method::execute" in share, share
    percent = float(share.rsplit("= ", 1)[1].split("%")[0])
    assert 0 < percent <= 100, share
