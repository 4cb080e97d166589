"""The ProgramReport action: a program's files -> `<program>.report.html` and its summary
`<program>.report.json` (what program_dashboard reads).

It reads only what the build already made (the lowering's graph record, the .pte and its
manifest, the .pt2 manifests, the .ptd, the selected operators; and an ETDump of native runs
when one is given), lays each method's graph out with graphviz's `dot`, and writes one
self-contained HTML file (reports/program_report.py). No torch, no ExecuTorch import: a report
costs about a second, not a lowering.
"""

import json
import os

from exporter.core import atomic
from exporter.core.errors import UserError
from exporter.formats import pte_inspect
from exporter.reports import graph_dot, program_report


def read_json(path, what):
    """A build file's JSON; one line naming the file when it is missing or not JSON."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise UserError(f"cannot read {what} {os.path.basename(path)}: {e}") from e


def read_selected_operators(path):
    """{operator: [dtype signature, ...]} from a selected_operators.yaml (et_kernel_metadata)."""
    import yaml

    from exporter.core import dtypes

    with open(path, encoding="utf-8") as f:
        found = yaml.safe_load(f) or {}
    result = {}
    for op, entries in sorted((found.get("et_kernel_metadata") or {}).items()):
        texts = []
        for entry in entries or []:
            codes = str(entry).partition("/")[2].split("|")
            texts.append(" | ".join(dtypes.executorch_name(int(c.split(";")[0])) if c.split(";")[0].isdigit()
                                    else "-" for c in codes))
        result[op] = texts
    return result


def dot_version(path):
    """'graphviz 2.43.0', from the version file of the graphviz repository rule."""
    with open(path, encoding="utf-8") as f:
        return f.read().strip()


def layout_methods(graph, dot_tool):
    """{method: SVG of its graph}."""
    svgs = {}
    for name, method in graph["methods"].items():
        try:
            svgs[name] = graph_dot.layout(graph_dot.method_dot(method, f"{name}-"), dot_tool)
        except (OSError, RuntimeError) as e:
            raise UserError(f"graphviz could not lay out method {name}: {e}") from e
    return svgs


def read_profile(path, method, pte_path, graph):
    """(the profile section's data, {method: {node: {"time": ...}}}) from an ETDump of `method`."""
    from exporter.formats import etdump

    if method not in graph["methods"]:
        raise UserError(f"the ETDump is of method {method!r}, which the program does not have; "
                        f"set etdump_method to one of {sorted(graph['methods'])}")
    with open(path, "rb") as f:
        buf = f.read()
    try:
        found = etdump.profile(buf, os.path.basename(path))
    except Exception as e:  # a foreign or truncated file fails in many ways; say so in one line
        raise UserError(f"cannot read the ETDump {os.path.basename(path)}: {e}") from e
    with open(pte_path, "rb") as f:
        plan = etdump.instructions(pte_inspect.read_program(f.read()), method)
    found["method"] = method
    return found, {method: etdump.attribute(found, plan, graph["methods"][method])}


def read_data(config):
    """The report's data from the files a ReportConfig names: the graph record, the manifests,
    the .pte's and .ptd's summaries, the selected operators, and each method's graph laid out."""
    graph = read_json(config.graph, "the graph record")
    data = {
        "graph": graph,
        "manifest": read_json(config.manifest, "the manifest"),
        "summary": pte_inspect.summarize(config.pte),
        "ptd": pte_inspect.summarize_ptd(config.ptd) if config.ptd else None,
        "exports": {m: read_json(p, "the export manifest") for m, p in sorted(config.exports.items())},
        "selected_operators": read_selected_operators(config.selected_operators)
        if config.selected_operators else None,
        "kernels": list(config.kernels),
        "profile": None,
        "graphviz": dot_version(config.dot_version),
        "svgs": layout_methods(graph, config.dot),
    }
    if config.etdump:
        data["profile"], data["node_extra"] = read_profile(config.etdump, config.etdump_method, config.pte, graph)
    return data


def write(data, html_path, summary_path):
    text, brief = program_report.render(data, os.path.basename(html_path))
    atomic.write_bytes(html_path, text.encode("utf-8"))
    if summary_path:
        atomic.write_bytes(summary_path, (json.dumps(brief, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def run(config):
    """Runs the action for a ReportConfig (outputs "html", and "summary" unless a report is
    written outside the build, as `bazel run <program>.profile -- --report=FILE` does)."""
    write(read_data(config), config.outputs["html"], config.outputs.get("summary"))
