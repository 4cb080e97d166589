"""executorch_benchmark of a 1.4 program with release = "1.4": 1.4's native runner times it, then
1.4.1's Python runtime beside it, and the report names both. No speed is asserted."""

import json
import subprocess

from runfiles import Runfiles

RUNFILES = Runfiles.Create()


def test_a_release_program_is_timed_in_that_releases_runtimes(tmp_path):
    benchmark = RUNFILES.Rlocation("rules_torch_export/tests/compatibility/xnnpack_f32_1_4.benchmark")
    report = tmp_path / "report.json"
    result = subprocess.run([benchmark, "--json", str(report)], capture_output=True, text=True,
                            env=RUNFILES.EnvVars())
    assert result.returncode == 0, result.stderr
    assert "native runtime (//native:et_runner_1_4): forward of //tests/compatibility:xnnpack_f32_1_4" in result.stderr
    assert "python runtime (ExecuTorch 1.4.1's executorch.runtime, same inputs)" in result.stdout
    figures = json.loads(report.read_text())
    assert figures["methods"]["forward"]["calls"] == 3 and figures["python"]["calls"] == 3
