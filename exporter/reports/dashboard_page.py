"""The dashboard across programs (program_dashboard; //models:report in the zoo): one page from
each program's report summary (program_report.summary), the limits of their program_budget_tests
and the SQNR floors of their numerics_tests, with a link to each program's report."""

import posixpath

from exporter.core import backends, releases
from exporter.reports import graph_dot, report_figures
from exporter.reports.report_html import Raw, bar, esc, note, page, percent, section, size, table

_BAR = "#2563eb"
INSTRUCTIONS = "instructions "  # a budgeted method's instructions per call: "instructions forward"


def output_dir(label):
    """Where a target's outputs are, relative to bazel-bin: its package, under external/<repo>
    for another repository's."""
    repo, _, rest = label.partition("//")
    package = rest.partition(":")[0]
    repo = repo.lstrip("@")
    return posixpath.join("external", repo, package) if repo else package


def report_link(summary, dashboard_package):
    """The program's report, relative to the dashboard's folder; both are in bazel-bin."""
    return posixpath.relpath(posixpath.join(output_dir(summary["label"]), summary["report"]), dashboard_package or ".")


def _share(value):
    return "-" if value is None else f"{100 * value:.1f}%"


def budget_figures(budget, summary):
    """[(figure, now, limit)] of one program_budget_test: the figures it limits, now."""
    limits = budget["limits"]
    found = []
    if limits.get("pte_bytes") is not None:
        found.append((".pte", summary["pte_bytes"], limits["pte_bytes"]))
    if limits.get("ptd_bytes") is not None:
        found.append((".ptd", summary["ptd_bytes"], limits["ptd_bytes"]))
    for method, limit in sorted((limits.get("planned_bytes") or {}).items()):
        found.append((f"planned {method}", summary["planned"].get(method), limit))
    for backend, limit in sorted((limits.get("delegate_bytes") or {}).items()):
        delegates = summary["by_backend"].get(backends.record(backend).delegate_id, {})
        found.append((f"delegates {backend}", delegates.get("bytes", 0), limit))
    for name, key in (("Vela SRAM", "sram_bytes"), ("Vela flash", "flash_bytes")):  # a program Vela compiled
        if limits.get(key) is not None:
            found.append((name, summary.get("vela", {}).get(key), limits[key]))
    for method, limit in sorted((limits.get("instructions") or {}).items()):  # counts, not bytes
        found.append((f"{INSTRUCTIONS}{method}", budget.get("counts", {}).get(method), limit))
    return found


def _figure_text(name, value):
    """A figure's cell: an instruction count as a number, any other figure as a size."""
    if value is None:
        return "-"
    return f"{value:,}" if name.startswith(INSTRUCTIONS) else size(value)


def headroom(figures):
    """The smallest share of a limit still free, or None without limits."""
    free = [(limit - now) / limit for _, now, limit in figures if limit and now is not None]
    return min(free) if free else None


def _floors(tests):
    """The SQNR floor of each numerics_test, or "defaults" for a test that sets none."""
    return ", ".join("defaults" if t.get("min_sqnr_db") is None else f"{t['min_sqnr_db']:g}" for t in tests)


def delegation_cell(summary, known):
    """Each backend of a program in its report's colour, with the operators it runs:
    "XnnpackBackend: 12 of 14 operators in 2 partitions"; "portable" for a program without one.
    known: the backends without a colour of their own met so far on the page (graph_dot)."""
    lines = [f'<span class="legend"><span><i style="background:{graph_dot.backend_colour(backend, known)}"></i>'
             f'{esc(report_figures.delegation_text(backend, figures, summary["operators"]))}</span></span>'
             for backend, figures in summary["by_backend"].items()]
    return Raw("<br>".join(lines)) if lines else "portable"


def release_cell(summary):
    """The ExecuTorch release that lowered the program and the oldest runtime measured to load it:
    "1.5 (the toolchain's, 1.5.1); ..." (releases.describe)."""
    return releases.describe(summary["executorch_release"])


def _row(summary, dashboard_dir, budgets, tests, timed, known):
    delegated = summary["delegated"]
    link = Raw(f'<a href="{esc(report_link(summary, dashboard_dir))}"><code>{esc(summary["label"])}</code></a>')
    figures = [f for b in budgets for f in budget_figures(b, summary)]
    row = [link, release_cell(summary), delegation_cell(summary, known), size(summary["pte_bytes"]),
           size(summary["ptd_bytes"]) if summary["ptd_bytes"] is not None else "",
           _share(delegated["operators"]), _share(delegated["flops"]), size(summary["planned_bytes"])]
    if timed:
        row.append("-" if summary["p50_ms"] is None else f"{summary['p50_ms']:.3f}")
    return row + [_floors(tests) if tests else "no test", _share(headroom(figures)) if budgets else "no budget"]


def budgets_section(summaries, budgets):
    """Every program_budget_test's figures against its limits."""
    by_label = {s["label"]: s for s in summaries}
    rows = []
    for budget in sorted(budgets, key=lambda b: b["label"]):
        summary = by_label.get(budget["program"])
        if summary is None:
            continue
        for name, now, limit in budget_figures(budget, summary):
            rows.append([Raw(f"<code>{esc(budget['label'])}</code>"), name, _figure_text(name, now), _figure_text(name, limit),
                         percent(limit - now, limit) if now is not None else "-",
                         bar([("used", now or 0, _BAR)], limit)])
    body = note("Each program_budget_test's limits, against the program's figures now; headroom is "
                "the share of the limit still free. The test also fails on growth past its golden. "
                "\"instructions <method>\" is one call's instructions in the native runner, counted by "
                "callgrind in one thread (max_instructions).")
    return section("budgets", "Budgets", body + table(
        ["program_budget_test", "figure", "now", "limit", "headroom", ""], rows, numeric=(2, 3, 4)))


def render(summaries, title, dashboard_dir, budgets=(), numerics=()):
    """The dashboard's HTML from report summaries, program_budget_test configs (label, program,
    limits) and numerics_test configs (label, program, min_sqnr_db)."""
    summaries = sorted(summaries, key=lambda s: s["label"])
    timed, known = any(s["p50_ms"] is not None for s in summaries), []
    rows = [_row(s, dashboard_dir, [b for b in budgets if b["program"] == s["label"]],
                 [t for t in numerics if t["program"] == s["label"]], timed, known) for s in summaries]
    headers = ["program", "ExecuTorch release", "delegation by backend", ".pte", ".ptd", "delegated ops",
               "delegated FLOPs", "planned"]
    headers += (["native p50 ms"] if timed else []) + ["SQNR floor dB", "budget headroom"]
    body = note("Each program's figures from its own report; click a program for its graph, sizes, memory "
                "plan and facts. The SQNR floor is the one the program's numerics_test sets (\"defaults\": "
                "its backends' tolerances, or 20 dB for a quantized program); the SQNR it measures is a "
                "test's result, and native time a measurement, neither a build output (docs/report.md). "
                "Headroom is the smallest share of a budget's limits still free.")
    body += table(headers, rows, numeric=tuple(range(3, len(headers))))
    total = sum(s["pte_bytes"] + (s["ptd_bytes"] or 0) for s in summaries)
    kpis = [("programs", str(len(summaries))), ("all .pte and .ptd", size(total)),
            ("99% of FLOPs delegated", str(sum(1 for s in summaries if (s["delegated"]["flops"] or 0) >= 0.99))),
            ("with a budget", str(len({b["program"] for b in budgets})))]
    sections = [("programs", "Programs", section("programs", "Programs", body))]
    if budgets:
        sections.append(("budgets", "Budgets", budgets_section(summaries, budgets)))
    return page(title, "ExecuTorch programs · rules_torch_export", kpis, sections, {"nodes": {}},
                "Written by rules_torch_export from each program's report summary.")
