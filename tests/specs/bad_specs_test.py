"""Every bad spec in bad_specs.py, and every program the lowering matrix expects to fail
(tests/lowering_matrix/matrix.bzl), fails the real Bazel build with one line naming its fix.
Both share one workspace and one Bazel run."""

import json
import os

import pytest

from tests.e2e import harness
from tests.specs import bad_specs


def _package(cases, prelude):
    return prelude + "\n" + "\n\n".join(snippet for _, snippet, _ in cases) + "\n"


def _matrix_failures():
    """{label: {"needles": [...], "absent": [...]}} from the matrix's table (runfiles)."""
    with open("tests/lowering_matrix/expected_failures.json", encoding="utf-8") as f:
        return json.load(f)


MATRIX_FAILURES = _matrix_failures()


@pytest.fixture(scope="module")
def build():
    """Builds every case's target in one keep-going Bazel run; yields (workspace, stderr)."""
    include = harness.DEFAULT_INCLUDE + ("examples/tutorial", "models", "tests/lowering_matrix")
    with harness.Workspace.create("bad_specs", include=include) as ws:
        ws.write("bad/models.py", bad_specs.MODELS)
        good = 'shape_spec(name = "good", inputs = {"x": tensor(["n"])}, dims = {"n": dim(max = 8)})\n' \
               'torch_export(name = "good_ep", model = ":double", shapes = ":good")\n'
        ws.write("bad/BUILD", 'exports_files(["models.py"])\n' + _package(
            bad_specs.ACTION, bad_specs.PRELUDE) + good)
        for label, snippet, _ in bad_specs.LOADING:
            ws.write(label[2:].split(":")[0] + "/BUILD", bad_specs.PRELUDE + snippet + "\n")
        targets = [label for label, _, _ in bad_specs.CASES] + ["//bad:good_ep"] + sorted(MATRIX_FAILURES)
        result = ws.bazel("build", "--keep_going", *targets)
        yield ws, result


def test_the_table_is_big_enough():
    assert len(bad_specs.CASES) >= 15
    labels = [label for label, _, _ in bad_specs.CASES]
    assert len(set(labels)) == len(labels)


def test_good_target_still_builds(build):
    ws, result = build
    assert result.code != 0
    assert os.path.exists(os.path.join(ws.path, "bazel-bin/bad/good_ep.pt2")), result.stderr[-3000:]


@pytest.mark.parametrize("label, needles", [(c[0], c[2]) for c in bad_specs.CASES], ids=[c[0] for c in bad_specs.CASES])
def test_bad_case_fails_with_its_fix(build, label, needles):
    _, result = build
    lines = [line for line in result.stderr.splitlines() if label in line and "Error in fail" in line or
             line.startswith(f"ERROR: {label}: ") or (label in line and "has to be one of" in line)]
    assert lines, f"no error line names {label}:\n{result.stderr[-4000:]}"
    matching = [line for line in lines if all(n in line for n in needles)]
    assert matching, f"{label}: expected {needles} in one of:\n" + "\n".join(lines)
    assert "Traceback" not in matching[0]


@pytest.mark.parametrize("label", sorted(MATRIX_FAILURES))
def test_matrix_program_fails_with_its_message(build, label):
    _, result = build
    expected = MATRIX_FAILURES[label]
    lines = [line for line in result.stderr.splitlines() if line.startswith(f"ERROR: {label}: ")]
    assert len(lines) == 1, f"no single error line for {label}:\n{result.stderr[-4000:]}"
    missing = [n for n in expected["needles"] if n not in lines[0]]
    assert not missing, f"{label}: {missing} not in:\n{lines[0]}"
    present = [n for n in expected["absent"] if n in lines[0]]
    assert not present, f"{label}: suggests what it already has, {present}:\n{lines[0]}"
    assert "Traceback" not in lines[0] and "internal error" not in lines[0]
