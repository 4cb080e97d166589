"""The report of a real program: the lowering's graph record, then the HTML and its summary from
the files the build made for //exporter/tests:tiny_xnnpack_pte, twice, to the byte; then a
dashboard of it, and a dashboard's inputs that are not what they claim, refused in one line."""

import copy
import dataclasses
import functools
import html
import json

import pytest
from runfiles import Runfiles

from exporter.actions import lower, program_graph, registry
from exporter.core.errors import UserError
from exporter.formats import pt2
from exporter.reports import dashboard, report, report_figures
from exporter.tests import built_programs


@functools.cache
def _lowered_record():
    """The tiny program's graph record: lowered once for every test here (none changes it)."""
    ep = pt2.load(built_programs.path("tiny_ep.pt2"))
    et_program, _ = lower.lower({"forward": ep}, ["xnnpack"])
    return program_graph.record(et_program, {"forward": pt2.load(built_programs.path("tiny_ep.pt2"))},
                                {"forward": None}, "//exporter/tests:tiny_xnnpack_pte")


def _graph(tmp_path):
    record = copy.deepcopy(_lowered_record())
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(record, sort_keys=True))
    return record, str(path)


def _config(graph_path, run):
    files = Runfiles.Create()
    return registry.ReportConfig(
        identity="", graph=graph_path, pte=built_programs.path("tiny_xnnpack_pte.pte"),
        manifest=built_programs.path("tiny_xnnpack_pte.pte.json"),
        exports={"forward": built_programs.path("tiny_ep.pt2.json")}, kernels=("portable",),
        dot=files.Rlocation("graphviz/dot.sh"), dot_version=files.Rlocation("graphviz/version.txt"),
        outputs={"html": str(run) + ".report.html", "summary": str(run) + ".report.json"}, raw={})


def test_the_graph_record_has_partitions_shapes_weights_and_the_memory_plan(tmp_path):
    record, _ = _graph(tmp_path)
    method = record["methods"]["forward"]
    assert [p["backend"] for p in method["partitions"]] and {p["backend"] for p in method["partitions"]} == {
        "XnnpackBackend"}
    ops = [n for n in method["nodes"] if n["kind"] == "op"]
    delegated = [n for n in ops if n["partition"] is not None]
    assert delegated and all(n["values"] for n in delegated)
    assert any(n["flops"] for n in delegated)
    assert method["weights"] and all(w["bytes"] == w["numel"] * 4 for w in method["weights"] if w["dtype"] == "float32")
    inputs = [n for n in method["nodes"] if n["kind"] == "input"]
    assert [v["max"][0] for n in inputs for v in n["values"]] == [8, 8]
    assert all(t["lifetime"][0] <= t["lifetime"][1] and t["bytes"] > 0 for t in method["memory"])


def test_the_report_is_self_contained_and_the_same_bytes_twice(tmp_path):
    _, graph_path = _graph(tmp_path)
    for run in ("a", "b"):
        report.run(_config(graph_path, tmp_path / run))
    first, second = (tmp_path / "a.report.html").read_bytes(), (tmp_path / "b.report.html").read_bytes()
    assert first == second
    text = first.decode("utf-8")
    for anchor in ("graph", "delegation", "size", "memory", "profile", "numerics", "budget", "facts"):
        assert f'<section id="{anchor}">' in text
    assert "<svg" in text and "XnnpackBackend #0" in text
    for needle in ("http://", "https://", "src=", str(tmp_path)):
        assert needle not in text.replace("http://www.w3.org/", ""), needle
    summary = json.loads((tmp_path / "a.report.json").read_text())
    assert summary["label"] == "//exporter/tests:tiny_xnnpack_pte" and summary["report"] == "a.report.html"
    assert 0 < summary["delegated"]["flops"] <= 1


# Two refusals as Arm's partitioner words them (backend_hooks/arm_fallback.py); one reason holds markup.
CPU_FALLBACK = [
    {"node": "aten_index_select_default", "operator": "aten.index_select.default",
     "reason": "Op is not supported on U55."},
    {"node": "aten_bitwise_not_default", "operator": "aten.bitwise_not.default",
     "reason": "Had torch.bool input attention_mask <bool> which is not supported."},
]


def test_the_report_lists_each_operator_left_on_the_cpu_with_its_reason(tmp_path):
    # The tiny program's files, its manifest given a cpu_fallback entry as an Arm lowering writes it.
    _, graph_path = _graph(tmp_path)
    config = _config(graph_path, tmp_path / "plain")
    with open(config.manifest, encoding="utf-8") as f:
        manifest = json.load(f)
    report.run(config)
    assert '<section id="fallback">' not in (tmp_path / "plain.report.html").read_text()  # nothing refused
    (tmp_path / "manifest.json").write_text(json.dumps(dict(manifest, cpu_fallback=CPU_FALLBACK)))
    report.run(dataclasses.replace(_config(graph_path, tmp_path / "arm"), manifest=str(tmp_path / "manifest.json")))
    text = (tmp_path / "arm.report.html").read_text()
    section = text[text.index('<section id="fallback">'):]
    section = section[:section.index("</section>")]
    assert "<h2>Left on the CPU</h2>" in section
    assert '<a href="#fallback">CPU fallback</a>' in text
    rows = section.split("<tbody>")[1].split("</tbody>")[0]
    assert rows == "".join(
        f"<tr><td><code>{html.escape(r['operator'])}</code></td><td><code>{html.escape(r['node'])}</code></td>"
        f"<td>{html.escape(r['reason'])}</td></tr>" for r in CPU_FALLBACK)
    assert "attention_mask &lt;bool&gt; which" in rows


def _dashboard_config(tmp_path, summaries, budgets=(), instructions=()):
    return registry.DashboardConfig(identity="", title="//pkg:dashboard", package="pkg", summaries=tuple(summaries),
                                    budgets=tuple(budgets), instructions=tuple(instructions),
                                    outputs={"html": str(tmp_path / "dashboard.html")}, raw={})


@pytest.fixture(scope="module")
def tiny_summary(tmp_path_factory):
    """The path of the tiny program's report summary, written once for the dashboard's tests."""
    folder = tmp_path_factory.mktemp("tiny")
    _, graph_path = _graph(folder)
    report.run(_config(graph_path, folder / "tiny"))
    return str(folder / "tiny.report.json")


def test_the_dashboard_links_the_report_and_shows_the_budget_s_headroom(tmp_path, tiny_summary):
    with open(tiny_summary, encoding="utf-8") as f:
        summary = json.load(f)
    budget = tmp_path / "budget.json"
    limit = 2 * summary["pte_bytes"]
    budget.write_text(json.dumps({"label": "//exporter/tests:tiny_budget_test", "program": summary["label"],
                                  "limits": {"pte_bytes": limit}}))
    dashboard.run(_dashboard_config(tmp_path, [tiny_summary], [str(budget)]))
    text = (tmp_path / "dashboard.html").read_text()
    assert '<a href="../exporter/tests/tiny.report.html">' in text  # from bazel-bin/pkg to the report
    assert "50.0%" in text  # half the .pte limit is free
    assert "http://" not in text.replace("http://www.w3.org/", "")


def test_the_dashboard_shows_each_method_s_instructions_against_its_budget(tmp_path, tiny_summary):
    with open(tiny_summary, encoding="utf-8") as f:
        program = json.load(f)["label"]
    budget, counts = tmp_path / "budget.json", tmp_path / "counts.json"
    budget.write_text(json.dumps({"label": "//exporter/tests:tiny_budget_test", "program": program,
                                  "limits": {"instructions": {"forward": 4_000_000}}}))
    counts.write_text(json.dumps({"program": program, "methods": {"forward": 1_000_000}, "load": 9_000_000}))
    dashboard.run(_dashboard_config(tmp_path, [tiny_summary], [str(budget)], [str(counts)]))
    rows = (tmp_path / "dashboard.html").read_text().split('id="budgets"')[1]
    assert "<td>instructions forward</td><td>1,000,000</td><td>4,000,000</td><td>75.0%</td>" in rows.replace(
        ' class="n"', "")


TOOLCHAIN_RELEASE = "1.5 (the toolchain&#x27;s, 1.5.1); the oldest runtime measured to load it: 1.3"


def test_the_report_and_the_dashboard_name_the_release_that_lowered_the_program(tmp_path, tiny_summary):
    # A program of the default release, whose manifest records none: the toolchain's is named.
    with open(tiny_summary, encoding="utf-8") as f:
        summary = json.load(f)
    assert summary["executorch_release"] == {"name": "1.5", "version": "1.5.1", "toolchain's": True,
                                             "oldest_runtime_measured": "1.3"}
    facts = open(tiny_summary.replace(".report.json", ".report.html"), encoding="utf-8").read().split('id="facts"')[1]
    assert f"<tr><td>ExecuTorch release</td><td>{TOOLCHAIN_RELEASE}</td></tr>" in facts
    dashboard.run(_dashboard_config(tmp_path, [tiny_summary]))
    text = (tmp_path / "dashboard.html").read_text()
    assert "<th>ExecuTorch release</th>" in text and f"<td>{TOOLCHAIN_RELEASE}</td>" in text


@pytest.mark.parametrize("content", ["[]", '{"format": "something else"}', "not json"])
def test_a_file_that_is_no_report_summary_fails_in_one_line(tmp_path, content):
    bad = tmp_path / "bad.report.json"
    bad.write_text(content)
    with pytest.raises(UserError) as e:
        dashboard.run(_dashboard_config(tmp_path, [str(bad)]))
    assert "bad.report.json" in str(e.value) and "\n" not in str(e.value)
    assert not (tmp_path / "dashboard.html").exists()


def test_a_budget_config_that_is_no_test_config_fails_in_one_line(tmp_path, tiny_summary):
    bad = tmp_path / "budget.json"
    bad.write_text("[1, 2]")
    with pytest.raises(UserError, match=r"^budget.json is not a test's config; name program_budget_test"):
        dashboard.run(_dashboard_config(tmp_path, [tiny_summary], [str(bad)]))


def test_an_unbounded_dim_has_no_upper_bound_in_the_graph_record():
    # torch's int_oo calls itself finite; the record must not turn it into a number.
    import torch

    class Double(torch.nn.Module):
        def forward(self, x):
            return x * 2

    ep = torch.export.export(Double(), (torch.ones(3, 4),), dynamic_shapes={"x": {0: torch.export.Dim("n")}})
    et_program, _ = lower.lower({"forward": ep}, [])
    record = program_graph.record(et_program, {"forward": ep}, {"forward": None}, "//t:unbounded")
    inputs = [n for n in record["methods"]["forward"]["nodes"] if n["kind"] == "input"]
    assert [v["max"][0] for n in inputs for v in n["values"]] == [None]


def _weight(name, module, kind="parameter", size=16):
    return {"name": name, "module": module, "kind": kind, "bytes": size}


def test_weights_by_method_names_each_method_s_modules_and_leaves_the_cache_out():
    cache = _weight("decoder.k_cache", "decoder", kind="buffer", size=1000)
    graph = {"methods": {
        "vision_encoder": {"weights": [_weight("vision.w", "vision.project"), cache]},
        "token_embedding": {"weights": [_weight("embed.weight", "embed", size=32), cache]},
        "text_decoder": {"weights": [_weight("decoder.w", "decoder.blocks.0"), _weight("embed.weight", "embed", size=32),
                                     _weight("_lifted_tensor_constant0", "", kind="buffer", size=4), cache]}}}
    assert report_figures.weights_by_method(graph) == [
        ("vision_encoder", 1, 16, ["vision"], []),
        ("token_embedding", 1, 32, ["embed"], ["text_decoder"]),
        ("text_decoder", 3, 52, ["(program)", "decoder", "embed"], ["token_embedding"])]
