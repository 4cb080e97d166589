"""program_budget_test's runner (budget.py) on real programs: limits, growth, goldens, reports."""

import json
import os

import pytest

from exporter.checks import budget, contract, golden, instruction_budget
from exporter.formats import pte_inspect

PORTABLE = "exporter/tests/tiny_portable_pte"
XNNPACK = "exporter/tests/tiny_xnnpack_pte"
CONV = "exporter/tests/conv_net_pte"  # XNNPACK, weights in named data
EXTERNAL = "exporter/tests/conv_net_external_pte"  # the same with its weights in a .ptd


def _config(tmp_path, program=PORTABLE, limits=None, growth=None, golden_name=None, ptd=False):
    return {
        "kind": "budget",
        "label": "//pkg:budget_test",
        "program": "//pkg:program",
        "manifest": program + ".pte.json",
        "pte": program + ".pte",
        "ptd": program + ".ptd" if ptd else None,
        "methods": ["forward"],
        "limits": dict({"pte_bytes": None, "ptd_bytes": None, "planned_bytes": {}}, **(limits or {})),
        "max_growth_percent": growth,
        "golden": str(tmp_path / golden_name) if golden_name else None,
        "update_target": "//pkg:budget_test.update",
    }


def _run(data):
    """budget.run on the config the rule would write as data."""
    return budget.run(contract.BudgetConfig.from_json(data))


def _manifest(program=PORTABLE):
    with open(program + ".pte.json", encoding="utf-8") as f:
        return json.load(f)


def _write_golden(config, **changed):
    """Writes the golden as `.update` would, with some figures replaced."""
    data = json.loads(budget.golden_text(contract.BudgetConfig.from_json(config)))
    data["figures"].update(changed)
    with open(config["golden"], "w", encoding="utf-8") as f:
        json.dump(data, f)


def test_figures_come_from_the_manifest():
    manifest = _manifest()
    config = _config(None)
    assert budget.figures(contract.BudgetConfig.from_json(config), manifest) == {
        ".pte": os.path.getsize(PORTABLE + ".pte"),
        "planned forward": manifest["methods"]["forward"]["planned_memory"]["bytes"],
    }
    assert budget.figures(contract.BudgetConfig.from_json(config), manifest)["planned forward"] > 0


def test_within_limits_passes_and_prints_every_figure(tmp_path):
    size = os.path.getsize(PORTABLE + ".pte")
    ok, report = _run(_config(tmp_path, limits={"pte_bytes": size, "planned_bytes": {"forward": 1 << 20}}))
    assert ok, report
    assert f".pte                {size:,} bytes" in report
    assert "limit 1,048,576 (1.0 MiB)" in report
    assert "What fills the .pte, biggest first:" in report
    assert "Largest planned tensors of forward" in report


def test_over_the_pte_limit_fails_with_the_excess(tmp_path):
    size = os.path.getsize(PORTABLE + ".pte")
    ok, report = _run(_config(tmp_path, limits={"pte_bytes": size - 100}))
    assert not ok
    assert f".pte is {size:,} bytes" in report
    assert f"over its limit of {budget.human(size - 100)} by 100 bytes" in report
    assert "To fix: shrink the program, or raise the limit on //pkg:budget_test in its BUILD file." in report
    assert "record the new figures" not in report  # a new golden does not lift a limit


def test_over_the_planned_limit_fails(tmp_path):
    planned = _manifest()["methods"]["forward"]["planned_memory"]["bytes"]
    ok, report = _run(_config(tmp_path, limits={"planned_bytes": {"forward": planned - 1}}))
    assert not ok
    assert f"planned forward is {planned:,} bytes" in report


def test_growth_past_the_allowance_fails_and_names_the_update(tmp_path):
    config = _config(tmp_path, growth=2.0, golden_name="p.budget.json")
    size = os.path.getsize(PORTABLE + ".pte")
    before = int(size / 1.05)  # the program is now 5% bigger than the golden says
    _write_golden(config, **{".pte": before})
    ok, report = _run(config)
    assert not ok
    assert f".pte grew +{(size - before) * 100 / before:.2f}% since the golden ({before:,} -> {size:,} bytes)" in report
    assert "more than max_growth_percent = 2" in report
    assert "If the growth is intended, record the new figures (and review the golden's diff) with:\n" \
           "  bazel run //pkg:budget_test.update" in report
    assert "raise the limit" not in report


def test_growth_within_the_allowance_passes(tmp_path):
    config = _config(tmp_path, growth=2.0, golden_name="p.budget.json")
    size = os.path.getsize(PORTABLE + ".pte")
    _write_golden(config, **{".pte": int(size / 1.01) + 1})
    ok, report = _run(config)
    assert ok, report
    assert "allowed +2%" in report


def test_a_shrunk_figure_passes_with_a_note(tmp_path):
    config = _config(tmp_path, growth=2.0, golden_name="p.budget.json")
    _write_golden(config, **{".pte": os.path.getsize(PORTABLE + ".pte") * 2})
    ok, report = _run(config)
    assert ok, report
    assert "Note: .pte shrank past the allowance; lower the golden with: bazel run //pkg:budget_test.update" in report


def test_a_missing_golden_fails_with_the_update_command(tmp_path):
    ok, report = _run(_config(tmp_path, growth=2.0, golden_name="missing.json"))
    assert not ok
    assert "missing.json does not exist" in report
    assert "bazel run //pkg:budget_test.update" in report


def test_a_golden_without_a_figure_fails(tmp_path):
    config = _config(tmp_path, growth=2.0, golden_name="p.budget.json")
    _write_golden(config)
    data = json.load(open(config["golden"], encoding="utf-8"))
    del data["figures"]["planned forward"]
    json.dump(data, open(config["golden"], "w", encoding="utf-8"))
    ok, report = _run(config)
    assert not ok
    assert "the golden has no figure for planned forward" in report


def test_a_toolchain_change_is_named_when_a_figure_grows(tmp_path):
    config = _config(tmp_path, growth=0.0, golden_name="p.budget.json")
    _write_golden(config, **{".pte": 1})
    data = json.load(open(config["golden"], encoding="utf-8"))
    data["toolchain"]["executorch"] = "0.9.0"
    json.dump(data, open(config["golden"], "w", encoding="utf-8"))
    ok, report = _run(config)
    assert not ok
    assert "The golden was recorded with {'executorch': '0.9.0'" in report


def test_update_writes_a_golden_that_then_passes(tmp_path, monkeypatch):
    config = _config(tmp_path, growth=0.0, golden_name="pkg/p.budget.json")
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(dict(config, golden="pkg/p.budget.json")))
    monkeypatch.setenv("BUILD_WORKSPACE_DIRECTORY", str(tmp_path))
    assert golden.main(["--update", str(config_path)]) == 0
    written = json.loads((tmp_path / "pkg" / "p.budget.json").read_text())
    assert written["format"] == budget.GOLDEN_FORMAT
    assert written["figures"][".pte"] == os.path.getsize(PORTABLE + ".pte")
    assert written["toolchain"]["executorch"] == _manifest()["toolchain"]["executorch"]
    ok, report = _run(config)
    assert ok, report
    assert "(+0.00%, allowed +0%)" in report


@pytest.mark.parametrize("program", [PORTABLE, XNNPACK, CONV])
def test_contributors_account_for_the_flatbuffer_and_every_segment(program):
    with open(program + ".pte", "rb") as f:
        buf = f.read()
    summary = pte_inspect.summarize_bytes(buf)
    found = budget.contributors(buf)
    assert sum(size for size, _ in found) == summary["flatbuffer_bytes"] + sum(s["bytes"] for s in summary["segments"])
    assert [size for size, _ in found] == sorted((size for size, _ in found), reverse=True)


def test_weights_are_named_data_and_the_input_is_the_biggest_planned_tensor():
    with open(CONV + ".pte", "rb") as f:
        buf = f.read()
    found = budget.contributors(buf)
    assert found[0][1].startswith("named data: ")
    assert found[0][0] > 0.99 * os.path.getsize(CONV + ".pte")
    size, what = budget.planned_tensors(buf, "forward")[0]
    assert size == 32 * 3 * 32 * 32 * 4  # batch at its max, 32
    assert what.endswith(" (input 0) float32[32, 3, 32, 32]")


def test_external_weights_budget_the_ptd_and_list_its_tensors(tmp_path):
    manifest = _manifest(EXTERNAL)
    config = _config(tmp_path, program=EXTERNAL, ptd=True, limits={"ptd_bytes": manifest["ptd"]["size"] - 1})
    ok, report = _run(config)
    assert not ok
    assert f".ptd is {manifest['ptd']['size']:,} bytes" in report
    tensors = pte_inspect.summarize_ptd(EXTERNAL + ".ptd")["tensors"]
    assert f"Largest tensors of the .ptd ({len(tensors)} in all):" in report
    biggest = max(tensors, key=lambda t: t["bytes"])
    assert biggest["key"] in report


# Two programs of one network whose inputs at their largest shape differ by 9.4 % (batch 35
# against 32; exporter/tests/BUILD), each counted by its budget test's InstructionCount action.
COUNTED = "exporter/tests/conv_net_pte_instructions"
GROWN = "exporter/tests/conv_net_grown_pte_instructions"


def _counted_config(test, instructions=None, golden_path=None):
    """The config test's rule wrote, with other instruction limits, golden and growth allowance."""
    with open(test + ".config.json", encoding="utf-8") as f:
        data = json.load(f)
    data["limits"]["instructions"] = instructions or {}
    data.update(golden=golden_path, max_growth_percent=2 if golden_path else None)
    return data


def _forward_count(test):
    with open(test + ".instructions.json", encoding="utf-8") as f:
        return json.load(f)["methods"]["forward"]


def test_a_program_10_percent_slower_fails_its_instruction_budget():
    counted, grown = _forward_count(COUNTED), _forward_count(GROWN)
    assert 1.05 < grown / counted < 1.15, (counted, grown)  # about 10 % more work
    limit = int(counted * 1.02)
    ok, report = _run(_counted_config(COUNTED, {"forward": limit}))
    assert ok, report
    assert f"instructions forward  {counted:,} per call" in report
    ok, report = _run(_counted_config(GROWN, {"forward": limit}))
    assert not ok
    failure = [line for line in report.splitlines() if "method forward ran" in line]
    assert len(failure) == 1, report
    over = (grown - limit) * 100.0 / limit
    assert failure[0].strip() == (
        f"//exporter/tests:conv_net_grown_pte method forward ran {grown:,} instructions per call, over its "
        f"budget of {limit:,} by {over:.1f}% (counted on {instruction_budget.counted_on(_counts(GROWN))})")
    assert "family" in failure[0] and "valgrind" in failure[0]  # where it was counted
    assert "make it faster" in report


def _counts(test):
    with open(test + ".instructions.json", encoding="utf-8") as f:
        return json.load(f)


def test_the_golden_catches_the_slowdown_and_reports_the_loading(tmp_path):
    golden_path = str(tmp_path / "conv_net_pte.budget.json")
    _write_golden(_counted_config(COUNTED, {"forward": 10**9}, golden_path))
    recorded = json.loads(open(golden_path, encoding="utf-8").read())
    assert recorded["figures"]["instructions forward"] == _forward_count(COUNTED)
    assert recorded["instructions_counted_on"] == instruction_budget.counted_on(_counts(COUNTED))
    ok, report = _run(_counted_config(COUNTED, {"forward": 10**9}, golden_path))
    assert ok, report
    assert f"ran {_counts(COUNTED)['load']:,}, apart from the calls" in report
    ok, report = _run(_counted_config(GROWN, {"forward": 10**9}, golden_path))
    assert not ok
    growth = (_forward_count(GROWN) - _forward_count(COUNTED)) * 100.0 / _forward_count(COUNTED)
    assert (f"method forward ran {_forward_count(GROWN):,} instructions per call, {growth:+.2f}% since the golden's "
            f"{_forward_count(COUNTED):,}, more than max_growth_percent = 2") in report
