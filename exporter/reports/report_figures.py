"""The figures a program's report and the zoo's dashboard show, computed from the files the build
already has: the lowering's graph record (actions/program_graph.py), the .pte's summary
(pte_inspect), the manifests, and, when the program has them, a budget, an ETDump profile and a
numerics report. Plain data in, plain data out."""

import collections

PORTABLE = "portable"  # operators outside delegates run on the program's kernel libraries


def runner_of(node, partitions):
    """The backend that runs an operator, or PORTABLE."""
    part = node.get("partition")
    return PORTABLE if part is None else partitions[part]["backend"]


def coverage(method):
    """{runner: {"operators", "parameters", "flops"}} of one method; parameters are counted once
    per weight, where its first user runs."""
    partitions = {p["index"]: p for p in method["partitions"]}
    found = collections.defaultdict(lambda: {"operators": 0, "parameters": 0, "flops": 0})
    counted = set()
    weights = {w["name"]: w for w in method["weights"]}
    for node in method["nodes"]:
        if node["kind"] != "op":
            continue
        runner = found[runner_of(node, partitions)]
        runner["operators"] += 1
        runner["flops"] += node.get("flops") or 0
        for name in node.get("weights", []):
            if name not in counted and weights.get(name, {}).get("kind") == "parameter":
                counted.add(name)
                runner["parameters"] += weights[name]["numel"]
    return dict(sorted(found.items(), key=lambda item: (item[0] == PORTABLE, item[0])))


def shares(cover):
    """{measure: share delegated (0..1) or None} over a coverage dict."""
    result = {}
    for measure in ("operators", "parameters", "flops"):
        total = sum(c[measure] for c in cover.values())
        delegated = sum(c[measure] for runner, c in cover.items() if runner != PORTABLE)
        result[measure] = delegated / total if total else None
    return result


def program_coverage(graph):
    """Coverage summed over every method of a graph record."""
    total = collections.defaultdict(lambda: {"operators": 0, "parameters": 0, "flops": 0})
    for method in graph["methods"].values():
        for runner, counts in coverage(method).items():
            for measure, value in counts.items():
                total[runner][measure] += value
    return dict(sorted(total.items(), key=lambda item: (item[0] == PORTABLE, item[0])))


def by_backend(graph):
    """{backend: {"operators", "partitions", "bytes", "flops"}} of every backend that runs a
    partition of the graph, over all its methods: its operators, its partitions, their payloads'
    bytes and its share of the FLOPs."""
    cover = program_coverage(graph)
    flops = sum(c["flops"] for c in cover.values())
    partitions = [p for m in graph["methods"].values() for p in m["partitions"]]
    return {backend: {"operators": cover.get(backend, {}).get("operators", 0),
                      "partitions": sum(1 for p in partitions if p["backend"] == backend),
                      "bytes": sum(p["bytes"] for p in partitions if p["backend"] == backend),
                      "flops": cover.get(backend, {}).get("flops", 0) / flops if flops else None}
            for backend in sorted({p["backend"] for p in partitions})}


def operator_count(graph):
    """The operators of every method of a graph record."""
    return sum(1 for m in graph["methods"].values() for n in m["nodes"] if n["kind"] == "op")


def delegation_text(backend, figures, operators):
    """'XnnpackBackend: 12 of 14 operators in 2 partitions'."""
    partitions = figures["partitions"]
    return (f"{backend}: {figures['operators']:,} of {operators:,} operators in {partitions} "
            f"partition{'s' if partitions != 1 else ''}")


def operator_table(method):
    """[(operator, {runner: count})] sorted by total count, then name."""
    partitions = {p["index"]: p for p in method["partitions"]}
    counts = collections.defaultdict(collections.Counter)
    for node in method["nodes"]:
        if node["kind"] == "op":
            counts[node["op"]][runner_of(node, partitions)] += 1
    return sorted(counts.items(), key=lambda item: (-sum(item[1].values()), item[0]))


def weights_by_module(method, limit=15):
    """[(module, bytes, tensors)] of the largest modules by weight bytes, and the rest as one row."""
    by_module = collections.defaultdict(lambda: [0, 0])
    for weight in method["weights"]:
        if _is_state(weight):
            continue  # state, not a weight
        row = by_module[weight["module"] or "(program)"]
        row[0] += weight["bytes"]
        row[1] += 1
    rows = sorted(((m, b, n) for m, (b, n) in by_module.items()), key=lambda r: (-r[1], r[0]))
    if len(rows) > limit:
        rest = rows[limit:]
        rows = rows[:limit] + [(f"{len(rest)} other modules", sum(r[1] for r in rest), sum(r[2] for r in rest))]
    return rows


def _is_state(weight):
    return weight["kind"] == "buffer" and not weight["name"].startswith("_lifted")  # a mutable buffer


def weights_by_method(graph):
    """[(method, tensors, bytes, top-level modules, methods that name the same tensors)]: which
    method holds which weights, state (a mutable buffer such as a KV cache) left out."""
    names = {m: {w["name"] for w in method["weights"] if not _is_state(w)} for m, method in graph["methods"].items()}
    rows = []
    for name, method in graph["methods"].items():
        weights = [w for w in method["weights"] if not _is_state(w)]
        modules = sorted({(w["module"] or "(program)").split(".")[0] for w in weights})
        shared = [other for other in graph["methods"] if other != name and names[name] & names[other]]
        rows.append((name, len(weights), sum(w["bytes"] for w in weights), modules, shared))
    return rows


def largest_weights(method, limit=10):
    return sorted(method["weights"], key=lambda w: (-w["bytes"], w["name"]))[:limit]


def planned_buffers(method):
    """[(buffer id, bytes used, tensors)] from the memory plan: the end of its last tensor."""
    buffers = collections.defaultdict(lambda: [0, 0])
    for tensor in method["memory"]:
        row = buffers[tensor["buffer"]]
        row[0] = max(row[0], tensor["offset"] + tensor["bytes"])
        row[1] += 1
    return [(b, used, n) for b, (used, n) in sorted(buffers.items())]


def pte_composition(summary):
    """[(part, bytes)] of the .pte file: the flatbuffer (program, inline constants and payloads)
    and its segments by what they hold, and the rest (headers, alignment)."""
    parts = collections.OrderedDict([("program flatbuffer", summary["flatbuffer_bytes"])])
    for segment in summary["segments"]:
        holds = segment["holds"] or ["unreferenced"]
        kind = "delegate payloads" if holds[0].startswith("delegate") else holds[0]
        parts[kind] = parts.get(kind, 0) + segment["bytes"]
    parts["headers and alignment"] = max(summary["file_bytes"] - sum(parts.values()), 0)
    return [(k, v) for k, v in parts.items() if v]
