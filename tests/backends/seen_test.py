"""What the report, the dashboard, program_budget_test and pte_inspect say of each backend's
delegates, and what the manifest records of its packages, on the programs of tests/backends."""

import importlib.metadata
import json
import re

import pytest

from exporter.checks import budget, contract
from exporter.formats import pte_inspect
from exporter.reports import graph_dot

PACKAGE = "tests/backends/"
BACKENDS = ("coreml", "openvino", "xnnpack")
# The id ExecuTorch gives each backend's delegates.
DELEGATE_IDS = {"coreml": "CoreMLBackend", "openvino": "OpenvinoBackend", "xnnpack": "XnnpackBackend"}


def _json(path):
    with open(PACKAGE + path, encoding="utf-8") as f:
        return json.load(f)


def _text(path):
    with open(PACKAGE + path, encoding="utf-8") as f:
        return f.read()


def _delegates(backend):
    """The manifest's delegates of the program's one method: {id: {"count", "bytes"}}."""
    return _json(f"conv_linear_{backend}.pte.json")["methods"]["forward"]["delegates"]


def _frame_colour(html, method):
    """The colour of the frame that the report's graph draws around the method's partition 0."""
    found = re.search(rf'<g id="{method}&#45;p0" class="cluster">\s*<path [^>]*stroke="(#[0-9a-f]+)"', html)
    return found and found.group(1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_report_gives_the_backend_s_operators_in_its_own_colour(backend):
    delegate_id = DELEGATE_IDS[backend]
    summary = _json(f"conv_linear_{backend}.report.json")
    figures = summary["by_backend"][delegate_id]
    assert list(summary["by_backend"]) == [delegate_id]
    assert figures["partitions"] == _delegates(backend)[delegate_id]["count"] == 1
    assert figures["bytes"] == _delegates(backend)[delegate_id]["bytes"]
    ops = [n for n in _json(f"conv_linear_{backend}.program_graph.json")["methods"]["forward"]["nodes"]
           if n["kind"] == "op"]
    assert summary["operators"] == len(ops) > 0
    assert figures["operators"] == sum(1 for n in ops if n.get("partition") is not None) == len(ops)
    html = _text(f"conv_linear_{backend}.report.html")
    line = f"{delegate_id}: {figures['operators']} of {summary['operators']} operators in 1 partition"
    colour = graph_dot.BACKENDS[delegate_id]
    assert f'<i style="background:{colour}"></i>{line}' in html
    assert _frame_colour(html, "forward") == colour


def test_a_program_of_two_backends_gives_each_its_share_and_its_colour():
    """conv_linear_mixed: the method forward for XNNPACK, intel for OpenVINO."""
    summary = _json("conv_linear_mixed.report.json")
    methods = _json("conv_linear_mixed.program_graph.json")["methods"]
    ops = [n for m in methods.values() for n in m["nodes"] if n["kind"] == "op"]
    assert summary["operators"] == len(ops)
    html = _text("conv_linear_mixed.report.html")
    for backend, method in (("xnnpack", "forward"), ("openvino", "intel")):
        delegate_id = DELEGATE_IDS[backend]
        [partition] = methods[method]["partitions"]
        assert partition["backend"] == delegate_id
        count = sum(1 for n in methods[method]["nodes"] if n["kind"] == "op")
        assert summary["by_backend"][delegate_id]["operators"] == count < len(ops)
        line = f"{delegate_id}: {count} of {len(ops)} operators in 1 partition"
        assert f'<i style="background:{graph_dot.BACKENDS[delegate_id]}"></i>{line}' in html
        assert _frame_colour(html, method) == graph_dot.BACKENDS[delegate_id]


def test_each_backend_has_a_colour_of_its_own():
    colours = [graph_dot.BACKENDS[DELEGATE_IDS[b]] for b in BACKENDS]
    assert len(set(colours)) == len(colours) and graph_dot.PORTABLE not in colours
    assert all(c in graph_dot.TINTS for c in colours)


def test_every_backend_s_delegates_have_a_colour_of_their_own_from_its_record():
    """TOSA's and Ethos-U's too: before, graph_dot named three backends' delegate ids, and the Arm
    programs' reports drew their delegates in whatever colour came next."""
    from exporter.core import backends

    colours = {r.delegate_id: graph_dot.BACKENDS.get(r.delegate_id) for r in backends.BY_NAME.values() if r.delegate_id}
    assert set(colours) >= {"TOSABackend", "EthosUBackend"}
    assert colours == {r.delegate_id: r.colour for r in backends.BY_NAME.values() if r.delegate_id}
    assert None not in colours.values() and len(set(colours.values())) == len(colours)
    assert graph_dot.PORTABLE not in colours.values() and not set(colours.values()) & set(graph_dot.EXTRA)


def test_the_dashboard_gives_each_program_s_delegation_by_backend():
    html = _text("dashboard.html")
    for backend in BACKENDS:
        delegate_id, summary = DELEGATE_IDS[backend], _json(f"conv_linear_{backend}.report.json")
        line = f"{delegate_id}: {summary['operators']} of {summary['operators']} operators in 1 partition"
        assert f'<i style="background:{graph_dot.BACKENDS[delegate_id]}"></i>{line}' in html
    for backend in ("coreml", "openvino"):  # the budgets' delegate limits, against the blobs now
        assert f"delegates {backend}" in html


def test_pte_inspect_names_both_backends_of_a_mixed_program(capsys):
    assert pte_inspect.main([f"{PACKAGE}conv_linear_mixed.pte"]) == 0
    text = capsys.readouterr().out
    methods = _json("conv_linear_mixed.pte.json")["methods"]
    assert "delegates by backend: OpenvinoBackend, XnnpackBackend\n" in text
    for delegate_id, method in (("OpenvinoBackend", "intel"), ("XnnpackBackend", "forward")):
        found = pte_inspect.fmt_bytes(methods[method]["delegates"][delegate_id]["bytes"])
        assert f"  {delegate_id}: 1 blob, {found}, in {method}\n" in text


@pytest.mark.parametrize("backend", BACKENDS)
def test_pte_inspect_names_each_backend_s_blobs_and_bytes(backend, capsys):
    delegate_id = DELEGATE_IDS[backend]
    assert pte_inspect.main([f"{PACKAGE}conv_linear_{backend}.pte"]) == 0
    text = capsys.readouterr().out
    found = _delegates(backend)[delegate_id]
    assert f"delegates by backend: {delegate_id}\n" in text
    assert f"  {delegate_id}: 1 blob, {pte_inspect.fmt_bytes(found['bytes'])}, in forward\n" in text


def _budget(backend, **limits):
    """The config of the package's program_budget_test of the backend, its limits replaced."""
    with open(f"{PACKAGE}conv_linear_{backend}_budget_test.config.json", encoding="utf-8") as f:
        data = json.load(f)
    data["limits"].update(limits)
    return contract.BudgetConfig.from_json(data)


@pytest.mark.parametrize("backend", ("coreml", "openvino"))
def test_a_budget_names_the_delegates_and_bounds_a_backend_s_blobs(backend):
    found = _delegates(backend)[DELEGATE_IDS[backend]]["bytes"]
    ok, report = budget.run(_budget(backend))
    assert ok, report
    assert re.search(rf"^  delegates {backend} +{re.escape(pte_inspect.fmt_bytes(found))} +limit 65,536 ", report, re.M)
    assert f"  {DELEGATE_IDS[backend]}: 1 blob, {pte_inspect.fmt_bytes(found)}, in forward\n" in report
    ok, report = budget.run(_budget(backend, delegate_bytes={backend: found - 1}))
    assert not ok
    assert f"delegates {backend} is {pte_inspect.fmt_bytes(found)}, over its limit of " in report
    assert "by 1 bytes" in report


def test_a_budget_bounds_each_backend_of_a_mixed_program():
    methods = _json("conv_linear_mixed.pte.json")["methods"]
    xnnpack = methods["forward"]["delegates"]["XnnpackBackend"]["bytes"]
    ok, report = budget.run(_budget("mixed"))
    assert ok, report
    assert re.search(rf"^  delegates xnnpack +{re.escape(pte_inspect.fmt_bytes(xnnpack))} +limit 4,096 ", report, re.M)
    ok, report = budget.run(_budget("mixed", delegate_bytes={"openvino": 1 << 20, "xnnpack": xnnpack - 1}))
    assert not ok and "delegates xnnpack is" in report and "delegates openvino is" not in report


def _pins(lock):
    """{distribution: version} of a hash-pinned lock's lines."""
    with open(lock, encoding="utf-8") as f:
        return dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", f.read(), re.M))


def test_the_manifest_records_the_backend_s_packages():
    pins = _pins("toolchain/backends/openvino.lock")
    openvino = _json("conv_linear_openvino.pte.json")["backend_packages"]
    assert openvino["openvino"]["packages"] == {"openvino": pins["openvino"], "nncf": pins["nncf"]}
    coreml = _json("conv_linear_coreml.pte.json")["backend_packages"]
    assert coreml["coreml"]["packages"] == {"coremltools": importlib.metadata.version("coremltools")}
    assert list(openvino) == ["openvino"] and list(coreml) == ["coreml"]


def test_an_xnnpack_manifest_has_no_backend_packages():
    """XNNPACK's packages are ExecuTorch's own; without the field, XNNPACK programs keep their bytes."""
    manifest = _json("conv_linear_xnnpack.pte.json")
    assert "backend_packages" not in manifest
    assert manifest["backends"] == ["xnnpack"]
