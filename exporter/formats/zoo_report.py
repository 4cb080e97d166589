"""The zoo's dashboard: one page across programs, from each program's report summary
(program_report.summary), with a link to each program's report."""

import posixpath

from exporter.formats.report_html import Raw, bar, esc, note, page, section, size, table

_BAR = "#2563eb"


def report_link(summary, dashboard_dir):
    """The program's report, relative to the dashboard's folder (both workspace-relative)."""
    package = summary["label"].lstrip("@").partition("//")[2].partition(":")[0]
    return posixpath.relpath(posixpath.join(package, summary["report"]), dashboard_dir or ".")


def _share(value):
    return "-" if value is None else f"{100 * value:.1f}%"


def _row(summary, dashboard_dir, largest):
    delegated = summary["delegated"]
    link = Raw(f'<a href="{esc(report_link(summary, dashboard_dir))}"><code>{esc(summary["label"])}</code></a>')
    return [link, ", ".join(summary["backends"]) or "portable", size(summary["pte_bytes"]),
            bar([("size", summary["pte_bytes"], _BAR)], largest),
            size(summary["ptd_bytes"]) if summary["ptd_bytes"] is not None else "",
            _share(delegated["operators"]), _share(delegated["flops"]), size(summary["planned_bytes"]),
            "-" if summary["p50_ms"] is None else f"{summary['p50_ms']:.3f}",
            "-" if summary["min_sqnr_db"] is None else f"{summary['min_sqnr_db']:.1f}",
            _share(summary["budget_headroom"])]


def render(summaries, title, dashboard_dir):
    """The dashboard's HTML for report summaries (sorted by label here)."""
    summaries = sorted(summaries, key=lambda s: s["label"])
    largest = max([s["pte_bytes"] for s in summaries] + [1])
    rows = [_row(s, dashboard_dir, largest) for s in summaries]
    headers = ["program", "backends", ".pte", "", ".ptd", "delegated ops", "delegated FLOPs",
               "planned", "p50 ms", "min SQNR dB", "headroom"]
    body = note("Each program's figures from its own report; click a program for its graph, sizes, memory "
                "plan and facts. Native p50 and SQNR appear where the program's report was given an ETDump "
                "or a numerics report; headroom is the smallest share of a budget limit still free.")
    body += table(headers, rows, numeric=(2, 4, 5, 6, 7, 8, 9, 10))
    total = sum(s["pte_bytes"] + (s["ptd_bytes"] or 0) for s in summaries)
    kpis = [("programs", str(len(summaries))), ("all .pte and .ptd", size(total)),
            ("99% of FLOPs delegated", str(sum(1 for s in summaries if (s["delegated"]["flops"] or 0) >= 0.99)))]
    return page(title, "ExecuTorch programs · rules_torch_export", kpis,
                [("programs", "Programs", section("programs", "Programs", body))], {"nodes": {}},
                "Written by rules_torch_export from each program's report summary.")
