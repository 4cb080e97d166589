"""A method's graph as Graphviz DOT, laid out by Debian's `dot` into inline SVG.

The report and the snapshot diff draw graphs this way: the layout is graphviz's (a well-kept
library), the text is ours. `dot` runs with the plugin folder that the graphviz repository rule
prepares (GVBINDIR: the core and dot-layout plugins only, no pango), so text is measured with
graphviz's own font tables instead of the machine's fonts: the same DOT gives the same SVG on
every machine with the same graphviz. What dot writes that is not the picture (its version
comment, titles of the graph) is dropped, so the bytes hold nothing of the machine.
"""

import os
import re
import subprocess

from exporter.core import backends

# Colours by who runs an operator: a backend's delegates take its record's colour (by delegate id),
# a delegate no record names the next of EXTRA.
PORTABLE = "#f59e0b"
BACKENDS = {r.delegate_id: r.colour for r in backends.BY_NAME.values() if r.delegate_id and r.colour}
EXTRA = ("#0d9488", "#65a30d", "#4f46e5", "#be123c")
IO = "#059669"
# The light shade of each colour, a node's fill.
TINTS = {"#2563eb": "#dbeafe", "#f59e0b": "#fef3c7", "#7c3aed": "#ede9fe", "#db2777": "#fce7f3",
         "#0d9488": "#ccfbf1", "#65a30d": "#ecfccb", "#059669": "#d1fae5", "#0891b2": "#cffafe",
         "#c026d3": "#fae8ff", "#4f46e5": "#e0e7ff", "#be123c": "#ffe4e6"}


def backend_colour(backend, known=None):
    """The colour of a backend: its own, else one of EXTRA in order of first appearance."""
    if backend in BACKENDS:
        return BACKENDS[backend]
    known = known if known is not None else []
    if backend not in known:
        known.append(backend)
    return EXTRA[known.index(backend) % len(EXTRA)]


def quote(text):
    """A DOT string literal."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def attrs(**values):
    return "[" + ", ".join(f"{k}={quote(v)}" for k, v in values.items() if v is not None) + "]"


def short_op(op):
    """'convolution' of 'aten.convolution.out'; 'to_dim_order_copy' of the dim_order op."""
    if not op:
        return "?"
    parts = op.split(".")
    name = parts[1] if len(parts) > 1 else parts[0]
    return name.lstrip("_")


def shape_text(value):
    """'f32[batch, 64, 112, 112]'."""
    dtype = value["dtype"].replace("float", "f").replace("bfloat", "bf").replace("uint", "u").replace("int", "i")
    return f"{dtype}[{', '.join(value['shape'])}]"


def layout(dot_text, dot_tool):
    """The SVG that `dot -Tsvg` draws for dot_text, without its prolog and comments.

    dot_tool is the launcher the graphviz repository rule writes (it sets GVBINDIR)."""
    result = subprocess.run([dot_tool, "-Tsvg"], input=dot_text.encode("utf-8"), capture_output=True,
                            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    if result.returncode != 0:
        raise RuntimeError(f"dot failed: {result.stderr.decode('utf-8', 'replace').strip()[:300]}")
    return clean_svg(result.stdout.decode("utf-8"))


_PROLOG = re.compile(r"\A.*?(?=<svg)", re.S)
_COMMENT = re.compile(r"<!--.*?-->\n?", re.S)


def clean_svg(svg):
    """dot's SVG, from <svg> on, with no comments and no fixed size (the page scales it)."""
    svg = _COMMENT.sub("", _PROLOG.sub("", svg, count=1))
    svg = re.sub(r'<svg width="[^"]*" height="[^"]*"', '<svg class="graph"', svg, count=1)
    return re.sub(r"<title>[^<]*</title>\n?", "", svg)


HEADER = """digraph G {
  graph [rankdir=TB, nodesep=0.22, ranksep=0.32, fontname="Helvetica", fontsize=11, bgcolor="transparent"];
  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, penwidth=1.2, margin="0.10,0.04"];
  edge [color="#94a3b8", arrowsize=0.6, penwidth=1.1];
"""


def node_label(node):
    """Operator, first output's dtype and shape, and the module that called it."""
    lines = [short_op(node["op"]) if node["kind"] == "op" else node["name"]]
    if node["values"]:
        lines.append(shape_text(node["values"][0]) + (" …" if len(node["values"]) > 1 else ""))
    if node.get("module"):
        module = node["module"]
        lines.append(module if len(module) <= 30 else "…" + module[-29:])
    return "\n".join(lines)


def node_statement(node, prefix, colour):
    """One DOT node; inputs and outputs are green ellipses, operators boxes in their runner's tint."""
    io = node["kind"] != "op"
    colour = IO if io else colour
    return "  {} {};".format(quote(prefix + node["id"]), attrs(
        id=prefix + node["id"], label=node_label(node), shape="ellipse" if io else None,
        color=colour, fillcolor=TINTS.get(colour, "#f1f5f9")))


def method_dot(method, prefix):
    """DOT of one method record (actions/program_graph.py): every node, each partition a cluster
    coloured by its backend, operators outside delegates in the portable colour."""
    known = []
    partitions = {p["index"]: p for p in method["partitions"]}
    lines, clusters = [HEADER], {}
    for node in method["nodes"]:
        part = node.get("partition")
        if part is None:
            lines.append(node_statement(node, prefix, PORTABLE))
        else:
            colour = backend_colour(partitions[part]["backend"], known)
            clusters.setdefault(part, []).append(node_statement(node, prefix, colour))
    for part, statements in sorted(clusters.items()):
        p = partitions[part]
        colour = backend_colour(p["backend"], known)
        lines.append("  subgraph {} {{".format(quote(f"cluster_{prefix}p{part}")))
        lines.append("    graph {};".format(attrs(
            label=f"{p['backend']} #{part}", style="rounded,dashed", color=colour, fontcolor=colour,
            id=f"{prefix}p{part}")))
        lines += ["  " + s for s in statements]
        lines.append("  }")
    for node in method["nodes"]:
        for source in node["inputs"]:
            lines.append(f"  {quote(prefix + source)} -> {quote(prefix + node['id'])};")
    lines.append("}\n")
    return "\n".join(lines)
