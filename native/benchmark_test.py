"""executorch_benchmark: //models/gru:gru_pte.benchmark runs the program natively and reports
what the README's table shows. No speed is asserted (the machines are noisy), only that the
figures are there and agree with what the build knows: planned memory with the budget's."""

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


def test_a_missing_kernel_fails_in_one_line_naming_the_library(tmp_path):
    """//native:et_runner_without_quantized lacks the quantized kernels that the q8 ResNet's
    quantize and dequantize operators outside the delegate need."""
    runner = RUNFILES.Rlocation("rules_torch_export/native/et_runner_without_quantized")
    program = RUNFILES.Rlocation("rules_torch_export/models/resnet_q8_pte.pte")
    result = subprocess.run([runner, program, "--call", "forward"], capture_output=True, text=True)
    assert result.returncode == 1
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("et_runner:")]
    assert "needs operator quantized_decomposed::" in line, line
    assert line.endswith("link @torch_export_venv//executorch:kernels_quantized (libexecutorch_kernels_quantized.so)"), line
