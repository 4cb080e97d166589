"""executorch_benchmark of an OpenVINO program: the native runner links the wheel's OpenVINO
backend, which loads OpenVINO's runtime from the backend's repository, and ExecuTorch's Python
runtime times the same inputs beside it. No speed is asserted (the machines are noisy), only that
the figures are there and come from both runtimes."""

import json
import subprocess

from runfiles import Runfiles

RUNFILES = Runfiles.Create()


def test_an_openvino_program_is_timed_in_the_native_and_python_runtimes(tmp_path):
    benchmark = RUNFILES.Rlocation("rules_torch_export/tests/backends/conv_linear_openvino.benchmark")
    report = tmp_path / "report.json"
    result = subprocess.run([benchmark, "--json", str(report)], capture_output=True, text=True,
                            env=RUNFILES.EnvVars())
    assert result.returncode == 0, result.stderr
    assert "native runtime (//native:et_runner): forward of //tests/backends:conv_linear_openvino" in result.stderr
    assert "OpenVINO: runtime loaded successfully" in result.stderr  # from the backend's repository
    figures = json.loads(report.read_text())
    assert json.loads(result.stdout.splitlines()[-1]) == figures
    native = figures["methods"]["forward"]
    assert native["calls"] == 5 and 0 < native["min_ms"] <= native["p50_ms"] <= native["p90_ms"]
    python = figures["python"]
    assert python["calls"] == 5 and 0 < python["min_ms"] <= python["p50_ms"] <= python["p90_ms"]
    assert python["over_native_p50"] > 0
    assert "x native p50" in result.stdout
