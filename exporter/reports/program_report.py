"""One program's standalone HTML report (`<program>.report.html`), and the summary the zoo's
dashboard reads (`<program>.report.json`).

render(data) takes what reports/report.py read: the graph record, the .pte summary, the
manifests, the SVG of each method's graph, and the optional ETDump profile.
"""

from exporter.core import backends, releases
from exporter.reports import graph_dot, report_charts, report_figures
from exporter.reports.report_html import Raw, bar, esc, legend, note, number, page, percent, section, size, table

SUMMARY_FORMAT = "rules_torch_export/report-summary/2"


def _colours(graph):
    """{runner: colour} for every backend of the program, and the portable kernels."""
    known, colours = [], {}
    for method in graph["methods"].values():
        for p in method["partitions"]:
            colours[p["backend"]] = graph_dot.backend_colour(p["backend"], known)
    colours[report_figures.PORTABLE] = graph_dot.PORTABLE
    return colours


def _memory_text(node_name, method):
    for t in method["memory"]:
        if t["name"] == node_name:
            return (f"buffer {t['buffer']}, offset {t['offset']:,}, {size(t['bytes'])}, "
                    f"steps {t['lifetime'][0]} to {t['lifetime'][1]}")
    return ""


def node_details(method, prefix, extra):
    """{svg id: what the details panel shows} for every node of a method; extra maps a node's
    name to its native time, when an ETDump gave one."""
    partitions = {p["index"]: p for p in method["partitions"]}
    details = {}
    for node in method["nodes"]:
        runs_on = "" if node["kind"] != "op" else report_figures.runner_of(node, partitions)
        if node.get("partition") is not None:
            runs_on += f" #{node['partition']}"
        details[prefix + node["id"]] = {
            "name": node["name"], "op": node["op"], "module": node.get("module", ""),
            "module_type": node.get("module_type", ""), "runs_on": runs_on,
            "values": [graph_dot.shape_text(v) for v in node["values"]],
            "weights": node.get("weights", []), "params": node.get("params"), "flops": node.get("flops"),
            "memory": _memory_text(node["name"], method) if node.get("partition") is None else "",
            **extra.get(node["name"], {}),
        }
    return details


def _graph_method(name, method, svg, on):
    tools = ('<div class="tools"><button data-z="fit">Fit</button><button data-z="0.8">+</button>'
             '<button data-z="1.25">&#8722;</button><input type="search" placeholder="find an operator or module">'
             '<span class="count note"></span></div>')
    counts = (f"{sum(1 for n in method['nodes'] if n['kind'] == 'op')} operators, "
              f"{len(method['partitions'])} delegated partitions")
    return (f'<div class="method{" on" if on else ""}" data-method="{esc(name)}">{note(counts)}{tools}'
            f'<div class="graphbox"><div class="viewport" data-method="{esc(name)}">{svg}</div>'
            f'<div class="details" id="details-{esc(name)}"><p class="note">Click an operator to see its '
            f'shapes, dtypes, module, weights, FLOPs and memory.</p></div></div></div>')


def _tabs(names):
    if len(names) < 2:
        return ""
    return '<div class="tabs">' + "".join(
        f'<button class="{"on" if i == 0 else ""}" data-method="{esc(n)}">{esc(n)}</button>'
        for i, n in enumerate(names)) + "</div>"


def graph_section(graph, svgs, colours):
    names = list(graph["methods"])
    keys = [(runner if runner != report_figures.PORTABLE else "outside delegates (kernels)", colour)
            for runner, colour in colours.items()] + [("inputs and outputs", graph_dot.IO)]
    body = legend(keys) + _tabs(names) + "".join(
        _graph_method(n, graph["methods"][n], svgs[n], i == 0) for i, n in enumerate(names))
    body += note("Laid out by graphviz. Drag to pan, scroll to zoom; shapes are upper bounds where a "
                 "dim varies, written with the shape spec's dim names.")
    return section("graph", "Graph", f"<div>{body}</div>")


def _coverage_rows(cover, colours):
    totals = {m: sum(c[m] for c in cover.values()) for m in ("operators", "parameters", "flops")}
    rows = []
    for runner, counts in cover.items():
        label = runner if runner != report_figures.PORTABLE else "outside delegates"
        rows.append([Raw(f'<span class="legend"><span><i style="background:{colours[runner]}"></i>'
                         f'{esc(label)}</span></span>'),
                     f"{number(counts['operators'])} ({percent(counts['operators'], totals['operators'])})",
                     f"{number(counts['parameters'])} ({percent(counts['parameters'], totals['parameters'])})",
                     f"{number(counts['flops'])} ({percent(counts['flops'], totals['flops'])})"])
    bars = ["share"] + [bar([(r, c[m], colours[r]) for r, c in cover.items()]) for m in
                        ("operators", "parameters", "flops")]
    return rows + [bars]


def _backend_lines(graph, colours):
    """One line per backend, in its colour: how many of the program's operators it runs."""
    operators = report_figures.operator_count(graph)
    lines = [f'<li><span class="legend"><span><i style="background:{colours[backend]}"></i>'
             f'{esc(report_figures.delegation_text(backend, figures, operators))}</span></span></li>'
             for backend, figures in report_figures.by_backend(graph).items()]
    return f"<ul>{''.join(lines)}</ul>" if lines else note("No operator is delegated.")


def delegation_section(graph, colours):
    parts = [note("The share of each method's operators, parameters and FLOPs (at the largest input "
                  "shapes; 2 per multiply-add) that each backend runs."), _backend_lines(graph, colours)]
    for name, method in graph["methods"].items():
        cover = report_figures.coverage(method)
        parts.append(f"<h3>{esc(name)}</h3>")
        parts.append(table(["runs on", "operators", "parameters", "FLOPs"], _coverage_rows(cover, colours),
                           numeric=(1, 2, 3)))
        runners = list(cover)
        rows = [[Raw(f"<code>{esc(op)}</code>")] + [counts.get(r, 0) or "" for r in runners]
                for op, counts in report_figures.operator_table(method)]
        parts.append("<details><summary>Operators by runner</summary>" + table(
            ["operator"] + runners, rows, numeric=tuple(range(1, len(runners) + 1))) + "</details>")
    return section("delegation", "Delegation coverage", "".join(parts))


_SIZE_COLOURS = ("#1e3a8a", "#2563eb", "#60a5fa", "#f59e0b", "#10b981", "#a78bfa", "#94a3b8")


def _composition(summary):
    parts = report_figures.pte_composition(summary)
    coloured = [(k, v, _SIZE_COLOURS[i % len(_SIZE_COLOURS)]) for i, (k, v) in enumerate(parts)]
    rows = [[Raw(f'<span class="legend"><span><i style="background:{c}"></i>{esc(k)}</span></span>'),
             size(v), percent(v, summary["file_bytes"])] for k, v, c in coloured]
    return bar(coloured) + table(["part of the .pte", "bytes", "share"], rows, numeric=(1, 2))


def _weights_tables(method):
    top = max([b for _, b, _ in report_figures.weights_by_module(method)] + [1])
    layers = [[Raw(f"<code>{esc(m)}</code>"), n, size(b), bar([("bytes", b, "#2563eb")], top)]
              for m, b, n in report_figures.weights_by_module(method)]
    largest = [[Raw(f"<code>{esc(w['name'])}</code>"), w["dtype"], "×".join(map(str, w["shape"])) or "scalar",
                size(w["bytes"]), ", ".join("outside delegates" if p is None else f"partition {p}"
                                            for p in w["partitions"])]
               for w in report_figures.largest_weights(method)]
    return ("<h3>Weights by module</h3>" + table(["module", "tensors", "bytes", ""], layers, numeric=(1, 2))
            + "<h3>Largest tensors</h3>" + table(["tensor", "dtype", "shape", "bytes", "used in"], largest,
                                                  numeric=(3,)))


def size_section(data):
    summary, graph = data["summary"], data["graph"]
    parts = [note(f"The .pte is {size(summary['file_bytes'])} ({summary['file_bytes']:,} bytes). Weights are "
                  "listed at their exported dtype; a delegate may pack them (XNNPACK keeps its weights as "
                  "named data, keyed by digest)."), _composition(summary)]
    payloads = [[name, p["index"], p["backend"], size(p["bytes"])]
                for name, m in graph["methods"].items() for p in m["partitions"]]
    if payloads:
        parts.append("<h3>Delegate payloads</h3>" + table(["method", "partition", "backend", "bytes"], payloads,
                                                          numeric=(1, 3)))
    if len(graph["methods"]) > 1:
        rows = [[name, n, size(b), Raw(", ".join(f"<code>{esc(m)}</code>" for m in modules)), ", ".join(shared) or "none"]
                for name, n, b, modules, shared in report_figures.weights_by_method(graph)]
        parts.append("<h3>Weights by method</h3>" + table(
            ["method", "tensors", "bytes", "modules", "shares tensors with"], rows, numeric=(1, 2)))
    for name, method in graph["methods"].items():
        if method["weights"]:
            parts.append(f"<h3>{esc(name)}</h3>" + _weights_tables(method))
    ptd = data.get("ptd")
    if ptd:
        rows = [[Raw(f"<code>{esc(t['key'][:24])}</code>"), t["dtype"] or "(packed by the delegate)",
                 "×".join(map(str, t["sizes"])) if t["sizes"] else "", size(t["bytes"])]
                for t in sorted(ptd["tensors"], key=lambda t: (-t["bytes"], t["key"]))[:20]]
        parts.append(f"<h3>The .ptd: {len(ptd['tensors'])} named tensors, {size(ptd['bytes'])}</h3>"
                     + table(["key", "dtype", "shape", "bytes"], rows, numeric=(3,)))
    return section("size", "Size", "".join(parts))


def memory_section(graph):
    parts = [note("What each method's memory plan holds: ExecuTorch places every tensor outside a delegate "
                  "in a planned buffer for the steps it lives; a delegate's own scratch memory is its "
                  "own. Hover a box for the tensor.")]
    for name, method in graph["methods"].items():
        buffers = report_figures.planned_buffers(method)
        parts.append(f"<h3>{esc(name)}</h3>")
        if not buffers:
            parts.append(note("No planned tensors."))
            continue
        parts.append(table(["buffer", "bytes used", "tensors"], [[b, size(u), n] for b, u, n in buffers],
                           numeric=(1, 2)))
        for buffer_id, used, _ in buffers:
            parts.append(report_charts.memory_chart(method["memory"], buffer_id, used))
        largest = sorted(method["memory"], key=lambda t: (-t["bytes"], t["name"]))[:8]
        parts.append(table(["largest planned tensors", "buffer", "offset", "bytes", "steps"],
                           [[Raw(f"<code>{esc(t['name'])}</code>"), t["buffer"], f"{t['offset']:,}",
                             size(t["bytes"]), f"{t['lifetime'][0]}–{t['lifetime'][1]}"] for t in largest],
                           numeric=(1, 2, 3)))
    return section("memory", "Memory plan", "".join(parts))


# The backends whose delegates Vela compiles (their records' vela_figures), as the report names them.
VELA_TARGETS = " or ".join(r.title for r in backends.BY_NAME.values() if r.vela_figures)


def vela_section(vela):
    """Vela's figures of a program it compiled (the manifest's "vela", backend_hooks/vela.py): its
    totals, then each compile (one per delegate)."""
    totals = [["SRAM", size(vela["sram_bytes"])], ["flash (on- and off-chip)", size(vela["flash_bytes"])],
              ["DRAM", size(vela["dram_bytes"])],
              ["operators on the NPU", f"{vela['npu_operators']:,} of {vela['npu_operators'] + vela['cpu_operators']:,} "
                                       f"({100 * vela['npu_fraction']:.1f}%)"],
              ["operators on the CPU", f"{vela['cpu_operators']:,}"], ["MACs", f"{vela['macs']:,}"],
              ["cycles", f"{vela['cycles']:,}"], ["estimated time", f"{vela['estimated_ms']:g} ms"]]
    rows = [[i, c["accelerator"], c["system_config"], c["memory_mode"], f"{c['clock_hz'] / 1e6:g} MHz",
             size(c["sram_bytes"]), size(c["flash_bytes"]), f"{c['npu_operators']} / {c['cpu_operators']}",
             f"{c['macs']:,}", f"{c['cycles']:,}", f"{c['estimated_ms']:g}"] for i, c in enumerate(vela["compiles"])]
    return section("vela", f"{VELA_TARGETS} (Vela)", note(
        "Vela's own estimates, from its summary and per-layer CSV files, written when the lowering compiled "
        f"each {VELA_TARGETS} delegate: memory Vela plans, operators it places, cycles at the system config's clock. "
        f"Totals add up over the delegates. The command stream runs only on an {VELA_TARGETS} NPU (a board or Arm's "
        "Corstone FVP).") + table(["", ""], totals) + "<h3>Each Vela compile</h3>" + table(
        ["compile", "accelerator", "system config", "memory mode", "clock", "SRAM", "flash", "NPU / CPU operators",
         "MACs", "cycles", "ms"], rows, numeric=(0, 5, 6, 8, 9, 10)))


def fallback_section(rejected):
    """The operators a backend's partitioner left on the CPU, with its reasons (the manifest's
    "cpu_fallback", which backend_hooks/arm_fallback.py writes)."""
    rows = [[Raw(f"<code>{esc(r['operator'])}</code>"), Raw(f"<code>{esc(r['node'])}</code>"), r["reason"]]
            for r in rejected]
    return section("fallback", "Left on the CPU", note(
        "Operators the backend's partitioner did not give to its delegate, each with the reason the "
        "partitioner gave (ExecuTorch's WhyNoPartitionReporter). They run on the CPU, with the program's "
        "kernels.") + table(["operator", "node", "reason"], rows))


def profile_section(profile):
    if not profile:
        return section("profile", "Native time", note(
            "Native time is measured, not built: it changes from run to run and from device to device, "
            "and a build output must not. `bazel run <program>.profile` prints each operator's and each "
            "delegate's time in ExecuTorch's native runtime from an ETDump."))
    rows = [[r["runner"], Raw(f"<code>{esc('whole delegate call' if r['event'] == 'DELEGATE_CALL' else r['event'])}"
                              f"</code>"), f"{r['ms']:.3f}", percent(r["ms"], profile["execute_ms"]),
             ", ".join(r.get("nodes", []))] for r in profile["rows"][:60]]
    more = len(profile["rows"]) - 60
    return section("profile", "Native time", note(
        f"From {profile['source']}, a run of {profile['method']} in ExecuTorch's native runtime: "
        f"Method::execute took {profile['execute_ms']:.3f} ms per run on average, p50 {profile['p50_ms']:.3f} ms "
        f"over {profile['runs']} runs. A delegate's rows are its own events inside its call.") + table(
        ["runs on", "event", "ms per run", "share", "operator"], rows, numeric=(2, 3))
        + (note(f"{more} smaller rows not shown.") if more > 0 else ""))


def numerics_section():
    return section("numerics", "Numerics", note(
        "The program's numerics are a test's result, not a build output: numerics_test runs the .pte "
        "against its reference when `bazel test` runs it (its SQNR and tolerances), and a failing one "
        "writes where the program first departs, operator by operator, to its log. A report is built "
        "before any test runs, so it shows none; the dashboard names each program's numerics_test and "
        "the SQNR floor it sets."))


def budget_section():
    return section("budget", "Budget", note(
        "A program's limits are set by its program_budget_test, which depends on the program: the "
        "program cannot see them. The dashboard (program_dashboard; //models:report in the zoo) shows "
        "each budget's figures, limits and headroom. This program's figures are above: the .pte "
        "and .ptd in Size, each method's planned memory in Memory."))


def _kernels(selected):
    rows = []
    for op, entries in sorted((selected or {}).items()):
        rows.append([Raw(f"<code>{esc(op)}</code>"), "; ".join(entries)])
    return table(["operator outside delegates", "dtypes (inputs | outputs)"], rows) if rows else note(
        "No operator runs outside delegates.")


def facts_section(data):
    manifest = data["manifest"]
    toolchain = manifest.get("toolchain", {})
    facts = [["program", manifest.get("label", "")], ["python", toolchain.get("python", "")],
             ["torch", toolchain.get("torch", "")], ["executorch", toolchain.get("executorch", "")],
             ["ExecuTorch release", releases.describe(releases.of_manifest(manifest))],
             ["toolchain identity", Raw(f"<code>{esc(toolchain.get('identity_sha256', ''))}</code>")],
             ["backends", ", ".join(manifest.get("backends", [])) or "portable"],
             ["kernel libraries", ", ".join(data.get("kernels") or []) or "-"],
             ["graph layout", data.get("graphviz", "")]]
    inputs = [[k, Raw(f"<code>{esc(v)}</code>")] for k, v in sorted(manifest.get("inputs", {}).items())]
    for method, export in sorted(data.get("exports", {}).items()):
        for path, digest in sorted(export.get("inputs", {}).get("sources", {}).items()):
            inputs.append([f"{method}: {path}", Raw(f"<code>{esc(digest)}</code>")])
    return section("facts", "Facts", table(["", ""], facts) + "<h3>Input digests (sha256)</h3>"
                   + table(["input", "sha256"], inputs) + "<h3>Selected operators</h3>"
                   + _kernels(data.get("selected_operators")))


def summary(data, report_name):
    """What the zoo's dashboard shows of this program."""
    manifest, profile = data["manifest"], data.get("profile")
    planned = {name: m["planned_memory"]["bytes"] for name, m in manifest["methods"].items()
               if name in data["graph"]["methods"]}  # not the constant methods
    return {
        "format": SUMMARY_FORMAT,
        "label": manifest["label"],
        "report": report_name,
        "pte_bytes": manifest["pte"]["size"],
        "ptd_bytes": manifest.get("ptd", {}).get("size"),
        "methods": sorted(data["graph"]["methods"]),
        "backends": sorted({p["backend"] for m in data["graph"]["methods"].values() for p in m["partitions"]}),
        "delegated": report_figures.shares(report_figures.program_coverage(data["graph"])),
        "operators": report_figures.operator_count(data["graph"]),
        "by_backend": report_figures.by_backend(data["graph"]),
        "planned_bytes": max(planned.values()) if planned else 0,
        "planned": planned,
        "p50_ms": profile["p50_ms"] if profile else None,
        "executorch_release": releases.of_manifest(manifest),  # the release that lowered it (docs/compatibility.md)
        # Vela's figures of a program it compiled, for its budgets on the dashboard; other summaries keep their bytes.
        **({"vela": {k: manifest["vela"][k] for k in ("sram_bytes", "flash_bytes")}} if "vela" in manifest else {}),
    }


def _share(value):
    return "-" if value is None else f"{100 * value:.1f}%"


def kpis(data, brief):
    found = [(".pte", size(brief["pte_bytes"]))]
    if brief["ptd_bytes"] is not None:
        found.append((".ptd", size(brief["ptd_bytes"])))
    found += [("methods", str(len(brief["methods"]))),
              ("delegated operators", _share(brief["delegated"]["operators"])),
              ("delegated FLOPs", _share(brief["delegated"]["flops"]))]
    found += [(backend, f"{figures['operators']:,} of {brief['operators']:,} operators")
              for backend, figures in brief["by_backend"].items()]
    found.append(("planned memory", size(brief["planned_bytes"])))
    vela = data["manifest"].get("vela")
    if vela:
        found += [(f"{VELA_TARGETS} SRAM", size(vela["sram_bytes"])), (f"{VELA_TARGETS} flash", size(vela["flash_bytes"])),
                  ("Vela's estimate", f"{vela['estimated_ms']:g} ms")]
    if brief["p50_ms"] is not None:
        found.append(("native p50", f"{brief['p50_ms']:.3f} ms"))
    return found


def render(data, report_name):
    """(the report's HTML text, its summary for the dashboard)."""
    graph, brief = data["graph"], summary(data, report_name)
    colours = _colours(graph)
    extra = data.get("node_extra", {})
    sections = [
        ("graph", "Graph", graph_section(graph, data["svgs"], colours)),
        ("delegation", "Delegation", delegation_section(graph, colours)),
        ("size", "Size", size_section(data)),
        ("memory", "Memory", memory_section(graph)),
        *([("vela", VELA_TARGETS, vela_section(data["manifest"]["vela"]))] if "vela" in data["manifest"] else []),
        *([("fallback", "CPU fallback", fallback_section(data["manifest"]["cpu_fallback"]))]
          if "cpu_fallback" in data["manifest"] else []),
        ("profile", "Native time", profile_section(data.get("profile"))),
        ("numerics", "Numerics", numerics_section()),
        ("budget", "Budget", budget_section()),
        ("facts", "Facts", facts_section(data)),
    ]
    nodes = {name: node_details(method, f"{name}-", extra.get(name, {}))
             for name, method in graph["methods"].items()}
    text = page(brief["label"], "ExecuTorch program report · rules_torch_export", kpis(data, brief), sections,
                {"nodes": nodes}, f"Written by rules_torch_export from the build's own files; "
                                  f"graphs laid out by {data.get('graphviz', 'graphviz')}.")
    return text, brief
