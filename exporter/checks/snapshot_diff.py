"""The visual diff of a failing graph_snapshot_test: the golden's graph and the actual one side by
side, laid out by graphviz, with added, removed and changed nodes marked, and the text diff below.

Both graphs are read back from the snapshot text (formats/graph_text.py), so a golden written by
any earlier version can be drawn. Nodes are matched by what they compute, not by name: each
node's key is its operator, its result type and the operators of its arguments, so a node
inserted early (which renumbers every later `%add_N`) leaves the later nodes equal.
"""

import difflib
import re

from exporter.reports import graph_dot
from exporter.reports.report_html import esc, legend, note, page, section

_NODE = re.compile(r"^%(\w+) = ([^(]+)\((.*)\) -> (.*)$")
_REF = re.compile(r"%(\w+)")
_INPUT = re.compile(r"^(user_input|parameter|buffer|constant_tensor|custom_obj|token) %(\w+)[^:]*: (.*)$")

STATUS_COLOURS = {"added": "#16a34a", "removed": "#dc2626", "changed": "#d97706", "same": "#94a3b8"}
_TINTS = {"added": "#dcfce7", "removed": "#fee2e2", "changed": "#fef3c7", "same": "#f8fafc"}


def parse(text):
    """{graph section: [node]} of a snapshot's text; a node is {"name", "op", "args", "type",
    "line"}, user inputs have op "input", the return is op "output". Parameters are not nodes."""
    graphs, current, inputs = {}, None, []
    for line in text.splitlines():
        if line.startswith("== "):
            current = line[3:] if line.startswith("== graph") else None
            if current is not None:
                graphs[current] = list(inputs) if current == "graph" else []
            continue
        found = _INPUT.match(line)
        if found and found.group(1) == "user_input":
            inputs.append({"name": found.group(2), "op": "input", "args": [], "type": found.group(3), "line": line})
        if current is None:
            continue
        found = _NODE.match(line)
        if found:
            graphs[current].append({"name": found.group(1), "op": found.group(2).strip(),
                                    "args": _REF.findall(found.group(3)), "type": found.group(4), "line": line})
        elif line.startswith("return "):
            graphs[current].append({"name": "output", "op": "output", "args": _REF.findall(line), "type": "",
                                    "line": line})
    return graphs


def _keys(nodes):
    ops = {n["name"]: n["op"] for n in nodes}
    return [f"{n['op']}({','.join(ops.get(a, 'param') for a in n['args'])})->{n['type']}" for n in nodes]


def _pair(old, new):
    """Within a replaced run: each old node pairs with the first unpaired new node of the same
    operator ("changed"); the others were removed or added."""
    paired, taken = {}, set()
    for i, node in enumerate(old):
        for j, other in enumerate(new):
            if j not in taken and other["op"] == node["op"]:
                paired[i] = j
                taken.add(j)
                break
    old_status = {n["name"]: "changed" if i in paired else "removed" for i, n in enumerate(old)}
    new_status = {n["name"]: "changed" if j in taken else "added" for j, n in enumerate(new)}
    return old_status, new_status


def match(old, new):
    """({old name: status}, {new name: status}) with statuses added, removed, changed and same."""
    old_status, new_status = {}, {}
    matcher = difflib.SequenceMatcher(a=_keys(old), b=_keys(new), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            old_status.update((n["name"], "same") for n in old[i1:i2])
            new_status.update((n["name"], "same") for n in new[j1:j2])
        else:
            olds, news = _pair(old[i1:i2], new[j1:j2])
            old_status.update(olds)
            new_status.update(news)
    return old_status, new_status


def graph_dot_text(nodes, status, prefix):
    """DOT of one snapshot graph, each node filled by its status."""
    lines = [graph_dot.HEADER]
    names = {n["name"] for n in nodes}
    for n in nodes:
        state = status.get(n["name"], "same")
        label = f"{graph_dot.short_op(n['op']) if n['op'] not in ('input', 'output') else n['op']}\n%{n['name']}"
        if n["type"]:
            label += "\n" + (n["type"] if len(n["type"]) <= 34 else n["type"][:33] + "…")
        shape = "ellipse" if n["op"] in ("input", "output") else None
        lines.append("  {} {};".format(graph_dot.quote(prefix + n["name"]), graph_dot.attrs(
            id=f"{prefix}{n['name']}", label=label, shape=shape, color=STATUS_COLOURS[state],
            fillcolor=_TINTS[state], penwidth="2.2" if state != "same" else None,
            **{"class": "mark" if state != "same" else None})))
    for n in nodes:
        for arg in dict.fromkeys(a for a in n["args"] if a in names):
            lines.append(f"  {graph_dot.quote(prefix + arg)} -> {graph_dot.quote(prefix + n['name'])};")
    lines.append("}\n")
    return "\n".join(lines)


def _side(title, nodes, status, prefix, dot_tool):
    svg = graph_dot.layout(graph_dot_text(nodes, status, prefix), dot_tool)
    counts = {s: sum(1 for n in nodes if status.get(n["name"]) == s) for s in ("added", "removed", "changed")}
    summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v) or "no change"
    tools = ('<div class="tools"><button data-z="fit">Fit</button><button data-z="0.8">+</button>'
             '<button data-z="1.25">&#8722;</button><input type="search" placeholder="find a node"><span '
             'class="count note"></span></div>')
    return (f'<div><h3>{esc(title)}</h3>{note(summary)}{tools}<div class="graphbox solo">'
            f'<div class="viewport" data-method="{esc(prefix[:-1])}">{svg}</div></div></div>')


def _text_diff(golden_text, actual_text):
    lines = []
    for line in difflib.unified_diff(golden_text.splitlines(), actual_text.splitlines(), "golden", "actual",
                                     lineterm=""):
        kind = "a" if line.startswith("+") else "r" if line.startswith("-") else "h" if line.startswith("@") else ""
        lines.append(f'<span class="{kind}">{esc(line)}</span>' if kind else esc(line))
    return '<pre class="diff">' + "\n".join(lines) + "</pre>"


def _details(nodes, prefix, status):
    return {prefix + n["name"]: {"name": n["name"], "op": n["op"], "values": [n["type"]] if n["type"] else [],
                                 "runs_on": status.get(n["name"], "same")} for n in nodes}


def render(golden_text, actual_text, label, golden_name, dot_tool, graphviz):
    """The diff page's HTML."""
    old_graphs, new_graphs = parse(golden_text), parse(actual_text)
    sections, details = [], {}
    for index, name in enumerate(dict.fromkeys(list(old_graphs) + list(new_graphs))):
        old, new = old_graphs.get(name, []), new_graphs.get(name, [])
        old_status, new_status = match(old, new)
        golden_prefix, actual_prefix = f"golden{index}-", f"actual{index}-"
        details[golden_prefix[:-1]] = _details(old, golden_prefix, old_status)
        details[actual_prefix[:-1]] = _details(new, actual_prefix, new_status)
        body = legend(list(STATUS_COLOURS.items())) + '<div class="sides">' + _side(
            f"golden ({golden_name})", old, old_status, golden_prefix, dot_tool) + _side(
            "actual", new, new_status, actual_prefix, dot_tool) + "</div>"
        anchor = f"g{index}"
        sections.append((anchor, name.replace("== ", ""), section(anchor, name, body)))
    sections.append(("text", "Text diff", section("text", "Text diff", _text_diff(golden_text, actual_text))))
    return page(f"{label}: graph snapshot diff", f"{golden_name} against the program built now", [],
                sections, {"nodes": details}, f"Graphs laid out by {graphviz}.")
