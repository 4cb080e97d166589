"""executorch_benchmark of an OpenVINO program: the native runner cannot run it, so ExecuTorch's
Python runtime alone times it, with OpenVINO's packages from the backend's repository. No speed
is asserted (the machines are noisy), only that the figures are there and come from that runtime."""

import json
import subprocess

from runfiles import Runfiles

RUNFILES = Runfiles.Create()


def test_an_openvino_program_is_timed_in_the_python_runtime(tmp_path):
    benchmark = RUNFILES.Rlocation("rules_torch_export/tests/backends/conv_linear_openvino.benchmark")
    report = tmp_path / "report.json"
    result = subprocess.run([benchmark, "--json", str(report)], capture_output=True, text=True,
                            env=RUNFILES.EnvVars())
    assert result.returncode == 0, result.stderr
    assert "Python runtime (executorch.runtime): forward of //tests/backends:conv_linear_openvino" in result.stderr
    figures = json.loads(report.read_text())
    assert json.loads(result.stdout.splitlines()[-1]) == figures
    assert figures["runtime"] == "python" and figures["method"] == "forward", figures
    python = figures["python"]
    assert python["calls"] == 5 and 0 < python["min_ms"] <= python["p50_ms"] <= python["p90_ms"]
    assert python["load_ms"] > 0 and python["first_call_ms"] > 0
    assert "p50" in result.stdout and "over native" not in result.stdout
