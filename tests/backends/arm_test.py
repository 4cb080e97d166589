"""Arm's programs of tests/backends (docs/backends.md, "Arm"): each has its backend's delegate, as
the manifest and pte_inspect say, records its options and the Arm packages' versions, and has the
same bytes in two lowerings. The Ethos-U program's manifest holds Vela's figures, the same in
both lowerings and in its <name>.vela.json, which its report shows and its budget bounds. The TOSA programs' numerics_tests
(the TOSA reference model) fail past their floors, and the runtime refuses what it cannot run."""

import dataclasses

import hashlib
import json
import re

import pytest

from backend_hooks.checks import tosa_reference
from exporter.checks import budget, contract, numerics
from exporter.core.errors import BadFile
from exporter.formats import pte_inspect
from exporter.reports import dashboard_page
from exporter.reports.report_html import size

PACKAGE = "tests/backends/"
# program -> (its backend, the id of its delegates, its options with the defaults filled in).
PROGRAMS = {
    "conv_linear_tosa": ("tosa", "TOSABackend", {"profile": "FP"}),
    "conv_linear_tosa_int": ("tosa", "TOSABackend", {"profile": "INT"}),
    "conv_linear_ethos_u": ("ethos_u", "EthosUBackend",
                            {"target": "ethos-u55-128", "system_config": "default", "memory_mode": "default"}),
}


def _json(path):
    with open(PACKAGE + path, encoding="utf-8") as f:
        return json.load(f)


def _sha256(path):
    with open(PACKAGE + path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _pins():
    with open("toolchain/backends/arm.lock", encoding="utf-8") as f:
        return dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", f.read(), re.M))


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_the_whole_model_is_one_arm_delegate(program):
    backend, delegate_id, _ = PROGRAMS[program]
    manifest = _json(program + ".pte.json")
    assert manifest["backends"] == [backend]
    forward = manifest["methods"]["forward"]
    assert list(forward["delegates"]) == [delegate_id]
    assert forward["delegates"][delegate_id]["count"] == 1
    assert forward["delegates"][delegate_id]["bytes"] > 1000  # the weights are in the blob


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_pte_inspect_names_the_arm_delegate(program, capsys):
    _, delegate_id, _ = PROGRAMS[program]
    assert pte_inspect.main([f"{PACKAGE}{program}.pte"]) == 0
    text = capsys.readouterr().out
    found = _json(program + ".pte.json")["methods"]["forward"]["delegates"][delegate_id]
    assert f"delegates by backend: {delegate_id}\n" in text
    assert f"  {delegate_id}: 1 blob, {pte_inspect.fmt_bytes(found['bytes'])}, in forward\n" in text


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_the_manifest_records_the_options_and_arm_s_packages(program):
    backend, _, options = PROGRAMS[program]
    pins = _pins()
    record = _json(program + ".pte.json")["backend_packages"]
    assert list(record) == [backend]
    assert record[backend]["options"] == options
    wanted = {"tosa": ("tosa-tools",), "ethos_u": ("tosa-tools", "ethos-u-vela")}[backend]
    assert record[backend]["packages"] == {name: pins[name] for name in wanted}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_two_lowerings_give_the_same_bytes(program):
    first, again = _json(program + ".pte.json"), _json(program + "_again.pte.json")
    assert _sha256(program + ".pte") == _sha256(program + "_again.pte") == first["pte"]["sha256"]
    assert first["label"] != again["label"]  # two actions, not one output read twice


def test_vela_s_figures_are_in_the_ethos_u_manifest_only_and_the_same_twice():
    vela = _json("conv_linear_ethos_u.pte.json")["vela"]
    assert vela == _json("conv_linear_ethos_u_again.pte.json")["vela"]
    assert "vela" not in _json("conv_linear_tosa_int.pte.json")
    [compiled] = vela["compiles"]  # one delegate, one Vela compile
    assert (compiled["accelerator"], compiled["system_config"], compiled["memory_mode"]) == (
        "Ethos_U55_128", "Ethos_U55_High_End_Embedded", "Shared_Sram")  # ExecuTorch's defaults for the U55
    assert compiled["cpu_operators"] == 0 and compiled["npu_operators"] > 5 and vela["npu_fraction"] == 1.0
    assert 0 < vela["sram_bytes"] < 64 << 10 and vela["flash_bytes"] > 10 << 10  # the weights, packed
    assert vela["macs"] > 10_000 and vela["estimated_ms"] == round(vela["cycles"] * 1000 / compiled["clock_hz"], 6)


def test_vela_s_summary_is_a_build_output_the_same_as_the_manifest_s():
    for program in ("conv_linear_ethos_u", "conv_linear_ethos_u_again"):
        summary = _json(program + ".vela.json")
        assert summary == {"format": "rules_torch_export/vela-summary/1", "label": f"//tests/backends:{program}",
                           "vela": _json(program + ".pte.json")["vela"]}


def _budget(**limits):
    with open(PACKAGE + "conv_linear_ethos_u_budget_test.config.json", encoding="utf-8") as f:
        data = json.load(f)
    data["limits"].update(limits)
    return contract.BudgetConfig.from_json(data)


def test_the_budget_bounds_vela_s_figures_and_fails_past_them():
    vela = _json("conv_linear_ethos_u.pte.json")["vela"]
    ok, report = budget.run(_budget())
    assert ok, report
    assert re.search(rf"^  Vela SRAM +{re.escape(pte_inspect.fmt_bytes(vela['sram_bytes']))} +limit 8,192 ", report, re.M)
    assert re.search(r"^  Vela NPU fraction +1 +minimum 1 +ok$", report, re.M)
    ok, report = budget.run(_budget(sram_bytes=vela["sram_bytes"] - 1, flash_bytes=vela["flash_bytes"] - 1,
                                    estimated_ms=vela["estimated_ms"] / 2))
    assert not ok
    assert f"Vela SRAM is {pte_inspect.fmt_bytes(vela['sram_bytes'])}, over its limit of" in report
    assert f"Vela flash is {pte_inspect.fmt_bytes(vela['flash_bytes'])}, over its limit of" in report
    assert f"Vela estimated is {vela['estimated_ms']:g} ms, over its limit of {vela['estimated_ms'] / 2:g} ms" in report


def test_a_budget_of_vela_s_figures_fails_in_one_line_on_a_manifest_without_them(tmp_path, capsys):
    with open(PACKAGE + "conv_linear_ethos_u_budget_test.config.json", encoding="utf-8") as f:
        data = json.load(f)
    data["manifest"] = PACKAGE + "conv_linear_tosa_int.pte.json"  # as if the rule had let it through
    (tmp_path / "config.json").write_text(json.dumps(data))
    assert budget.main([str(tmp_path / "config.json")]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "//tests/backends:conv_linear_tosa_int has no Vela figures in its manifest" in error


def test_the_ethos_u_report_draws_its_delegate_in_the_record_s_colour():
    """Before, no record gave the Arm backends a colour: their reports took the next spare one."""
    with open(PACKAGE + "conv_linear_ethos_u.report.html", encoding="utf-8") as f:
        html = f.read()
    assert re.search(r'<i style="background:#db2777"></i>EthosUBackend: \d+ of \d+ operators', html)


def test_the_report_shows_vela_s_figures():
    vela = _json("conv_linear_ethos_u.pte.json")["vela"]
    with open(PACKAGE + "conv_linear_ethos_u.report.html", encoding="utf-8") as f:
        html = f.read()
    assert 'id="vela"' in html
    assert f"<td>SRAM</td><td>{size(vela['sram_bytes'])}</td>" in html
    assert f"{vela['npu_operators']:,} of {vela['npu_operators']:,} (100.0%)" in html
    assert f"{vela['estimated_ms']:g} ms" in html


@pytest.mark.parametrize("program, tightened", [
    ("conv_linear_tosa", {"tolerances": contract.Tolerances(rtol=0.0, atol=1e-9)}),
    ("conv_linear_tosa_int", {"min_sqnr_db": 80.0}),  # int8 rounding gives about 42 dB
    ("conv_linear_ethos_u", {"min_sqnr_db": 80.0}),
])
def test_the_tosa_reference_run_fails_past_its_floor(program, tightened):
    config = contract.load(f"{PACKAGE}{program}_numerics_test.config.json", contract.NumericsConfig)
    ok, report = numerics.run(config)
    assert ok, report
    assert "[tosa_reference]: output 0 float32[2, 10]" in report
    ok, report = numerics.run(dataclasses.replace(config, **tightened))
    assert not ok and "FAIL" in report


def test_the_graphs_vela_compiled_are_kept_the_same_twice_one_per_delegate_blob():
    path = PACKAGE + "conv_linear_ethos_u.vela_tosa.json"
    with open(path, "rb") as f, open(PACKAGE + "conv_linear_ethos_u_again.vela_tosa.json", "rb") as g:
        assert f.read() == g.read()
    graphs = tosa_reference.vela_graphs(path)
    blob = tosa_reference.Method(PACKAGE + "conv_linear_ethos_u.pte", "forward", path).graphs
    assert len(graphs) == 1 and blob == list(graphs.values()) and blob[0][4:8] == b"TOSA"


def test_an_ethos_u_delegate_without_its_graph_is_refused_in_one_line():
    with pytest.raises(tosa_reference.Unsupported, match="^method forward's EthosUBackend delegate has no TOSA "
                                                          "graph in the lowering's vela_tosa file; build the program again$"):
        tosa_reference.Method(PACKAGE + "conv_linear_ethos_u.pte", "forward")


@pytest.mark.parametrize("change, needle", [
    (lambda d: d.update(format="other/1"), "not a rules_torch_export/vela-tosa/1 file"),
    (lambda d: [e.update(tosa_base64="AAAA") for e in d["graphs"].values()], "does not have its sha256"),
    (lambda d: [e.update(tosa_base64="not base64!") for e in d["graphs"].values()], "Only base64 data is allowed"),
])
def test_a_vela_tosa_file_that_is_not_the_lowering_s_fails_in_one_line(tmp_path, change, needle):
    with open(PACKAGE + "conv_linear_ethos_u.vela_tosa.json", encoding="utf-8") as f:
        data = json.load(f)
    change(data)
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(BadFile) as caught:
        tosa_reference.vela_graphs(str(tmp_path / "bad.json"))
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def test_an_fvp_runner_gets_the_native_runner_s_command_line_and_its_failure_is_one_line():
    # No FVP is on this machine: //native:et_runner stands in for a team's runner, and it has no
    # EthosUBackend, so the run fails, in the report's one line naming the runner.
    config = contract.load(f"{PACKAGE}conv_linear_ethos_u_numerics_test.config.json", contract.NumericsConfig)
    ok, report = numerics.run(dataclasses.replace(config, runtimes=("fvp",), fvp_runner="native/et_runner",
                                                  fvp_runner_label="//native:et_runner"))
    assert not ok
    [line] = [line for line in report.splitlines() if "fvp runtime (//native:et_runner): FAIL, " in line]
    assert "delegated to EthosUBackend, which is not registered" in line


def test_the_dashboard_sets_vela_s_figures_against_the_budget_s_limits():
    vela = _json("conv_linear_ethos_u.pte.json")["vela"]
    summary = _json("conv_linear_ethos_u.report.json")
    budget = _json("conv_linear_ethos_u_budget_test.config.json")
    assert summary["vela"] == {"sram_bytes": vela["sram_bytes"], "flash_bytes": vela["flash_bytes"]}
    figures = dashboard_page.budget_figures(budget, summary)
    assert ("Vela SRAM", vela["sram_bytes"], 8192) in figures and ("Vela flash", vela["flash_bytes"], 16384) in figures
