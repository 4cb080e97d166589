"""//bench:arm64_table on made-up test outputs: zipped as Bazel leaves them, or not."""

import json
import zipfile

from bench import arm64_table


def _summary(test, largest, method="forward", reference="eager //m:model", seconds=None):
    return {"test": test, "program": test.replace("_numerics_test", "_pte"), "method": method,
            "reference": reference, "qemu_cpu": "max,sme=off", "largest_difference": largest,
            "arm64_seconds": seconds}


def _testlogs(tmp_path):
    """Three tests' outputs: one zipped, one as a plain file, one without an arm64 run."""
    zipped = tmp_path / "m" / "a_numerics_test" / "test.outputs"
    zipped.mkdir(parents=True)
    with zipfile.ZipFile(zipped / "outputs.zip", "w") as archive:
        archive.writestr(arm64_table.SUMMARY_FILE, json.dumps(_summary("//m:a_numerics_test", {
            "python": {"min batch=1": 3e-8, "max batch=8": 9e-8},
            "native": {"min batch=1": 4e-8, "example batch=16": 4e-8, "listed batch=2": 3e-8, "opt batch=2": 3e-8,
                       "max batch=8": 9e-5},  # max is not an arm64 case
            "arm64": {"min batch=1": 5e-8, "example batch=16": 6e-8, "listed batch=2": 4e-8, "opt batch=2": 4e-8},
            "arm64 vs native": {"min batch=1": 0.0, "example batch=16": 0.0, "listed batch=2": 0.0, "opt batch=2": 0.0},
        }, seconds=2.5)))
    plain = tmp_path / "m" / "b_numerics_test" / "test.outputs"
    plain.mkdir(parents=True)
    (plain / arm64_table.SUMMARY_FILE).write_text(json.dumps(_summary("//m:b_numerics_test", {
        "python": {"step 0 decode(pos=0)": 1e-7, "step 1 decode(pos=1)": 2e-7},
        "arm64": {"step 0 decode(pos=0)": 1e-7, "step 1 decode(pos=1)": None},  # not comparable
    }, method="steps", reference="program //m:float_ep", seconds=7.25)))
    other = tmp_path / "m" / "c_numerics_test" / "test.outputs"
    other.mkdir(parents=True)
    (other / arm64_table.SUMMARY_FILE).write_text(json.dumps(_summary("//m:c_numerics_test", {"python": {}})))
    return tmp_path


def test_one_row_per_test_with_an_arm64_run_over_its_cases(tmp_path):
    text, count = arm64_table.table(arm64_table.summaries(str(_testlogs(tmp_path))))
    assert count == 2
    lines = text.splitlines()
    assert lines[0].startswith("| program | test | arm64 cases | arm64 vs x86-64 |")
    # each size once, smallest first
    assert lines[2] == "| `//m:a_pte` | `a_numerics_test` | batch=1; batch=2; batch=16 | 0 | 4.0e-08 | 6.0e-08 | eager |"
    assert lines[3] == "| `//m:b_pte` | `b_numerics_test` | 2 steps | - | - | n/c | program |"


def test_the_arm64_runs_seconds_slowest_first(tmp_path, capsys):
    found = arm64_table.summaries(str(_testlogs(tmp_path)))
    assert arm64_table.arm64_seconds(found) == [(7.25, "//m:b_numerics_test"), (2.5, "//m:a_numerics_test")]
    assert arm64_table.main([str(tmp_path)]) == 0
    assert "their arm64 runs took 10 s in all (slowest: //m:b_numerics_test 7.2 s, //m:a_numerics_test 2.5 s)" \
        in capsys.readouterr().err


def test_no_arm64_outputs_fail_in_one_line_saying_what_to_run(tmp_path):
    message = arm64_table.main([str(tmp_path)])
    assert message == (f"arm64_table: no numerics_test with an arm64 run has outputs under {tmp_path}; run "
                       f"`bazel test //models/...` first")
