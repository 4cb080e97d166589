"""A runtime that cannot run a program of another release fails the test in one line that names
the program, its release and the runtime's, and what the runtime lacks, not the runtime's error
code: a 1.5 program that needs aten::avg_pool3d.out in ExecuTorch 1.4.1's Python runtime and in
//native:et_runner_1_4 (neither registers it)."""

import subprocess
import sys

import pytest

RUN = "import sys; from exporter.checks import numerics; sys.exit(numerics.main(sys.argv[1:]))"
PROGRAM = "program //models/volumetric:volume_net_pte, lowered for ExecuTorch 1.5 (1.5.1): "
EXPECTED = {
    "volume_net_in_1_4_python": "ExecuTorch 1.4 (1.4.1)'s Python runtime cannot run " + PROGRAM
                         + "it needs aten::avg_pool3d.out, which it does not register (error 0x14, OperatorMissing)",
    "volume_net_in_1_4_native": "ExecuTorch 1.4 (1.4.1)'s native runtime (//native:et_runner_1_4) cannot run " + PROGRAM
                                + "models/volumetric/volume_net_pte.pte: method \"forward\" needs operator "
                                  "aten::avg_pool3d.out, which no linked library registers; link a kernel library "
                                  "that has it: kernels_optimized is linked and lacks it (a selective build?)",
}


@pytest.mark.parametrize("test", sorted(EXPECTED))
def test_the_runtime_s_refusal_is_one_line_naming_both_releases(test):
    run = subprocess.run([sys.executable, "-c", RUN, f"tests/compatibility/{test}.config.json"],
                         capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    assert (run.stdout + run.stderr).splitlines() == [f"//tests/compatibility:{test}: {EXPECTED[test]}"]
