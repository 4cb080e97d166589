"""executorch_benchmark of a release's program with that release: its native runner times it, then
its Python runtime beside it, and the report names both. 1.3.1's Python runtime runs in a child
process on the venv of 1.3's runtimes, which times the calls there. No speed is asserted."""

import json
import subprocess

import pytest
from runfiles import Runfiles

RUNFILES = Runfiles.Create()

# release: (the benchmark's target, the banner's runner, the Python runtime's line)
CASES = {
    "1.3": ("xnnpack_f32_1_3.benchmark", "//native:et_runner_1_3",
            "python runtime (ExecuTorch 1.3.1's executorch.runtime in its own venv, same inputs)"),
    "1.4": ("xnnpack_f32_1_4.benchmark", "//native:et_runner_1_4",
            "python runtime (ExecuTorch 1.4.1's executorch.runtime, same inputs)"),
}


@pytest.mark.parametrize("release", sorted(CASES))
def test_a_release_program_is_timed_in_that_releases_runtimes(tmp_path, release):
    target, runner, python_line = CASES[release]
    benchmark = RUNFILES.Rlocation("rules_torch_export/tests/compatibility/" + target)
    report = tmp_path / "report.json"
    result = subprocess.run([benchmark, "--json", str(report)], capture_output=True, text=True,
                            env=RUNFILES.EnvVars())
    assert result.returncode == 0, result.stderr
    program = "//tests/compatibility:xnnpack_f32_" + release.replace(".", "_")
    assert f"native runtime ({runner}): forward of {program}" in result.stderr
    assert python_line in result.stdout, result.stdout
    figures = json.loads(report.read_text())
    assert figures["methods"]["forward"]["calls"] == 3 and figures["python"]["calls"] == 3
    assert figures["python"]["load_ms"] > 0 and figures["python"]["p50_ms"] > 0
