"""An ETDump (ExecuTorch's runtime trace, `.etdp`) read through its own schema, without exir.

ExecuTorch's Inspector joins an ETDump with the program's ETRecord, which costs exir's import
and a second lowering; a report only needs the profile events: each one's name (an operator
outside delegates is `native_call_<op>`, a delegate's own events carry the backend's names,
XNNPACK's such as "Convolution (NHWC, F32) IGEMM #1"), the instruction it belongs to, and its
start and end ticks (nanoseconds on Linux, where et_pal's ticks are). The file may be written
size-prefixed (flatcc), which is told from where the identifier lies.
"""

import collections
import os
import statistics

from exporter.formats import pte_schema

_SCHEMA = None


def _schema():
    global _SCHEMA
    if _SCHEMA is None:
        program_fbs = pte_schema.executorch_schema_path()
        root = program_fbs[:program_fbs.rindex("/executorch/") + len("/executorch/")]
        _SCHEMA = pte_schema.Schema(os.path.join(root, "devtools/etdump/etdump_schema_flatcc.fbs"))
    return _SCHEMA


def read_runs(buf):
    """[(run name, [event])] of an ETDump's bytes; an event is {"name", "instruction",
    "delegate" (the delegate's own debug name, or None), "ns"}."""
    schema = _schema()
    offset = 4 if bytes(buf[8:12]) == schema.file_identifier.encode() else 0
    root = pte_schema.read_root(schema, memoryview(buf)[offset:].tobytes() if offset else buf)
    runs = []
    for run in root.run_data:
        events = []
        for event in run.events:
            profile = event.profile_event
            if profile is None:
                continue
            events.append({"name": profile.name or profile.delegate_debug_id_str or "?",
                           "instruction": profile.instruction_id,
                           "delegate": profile.delegate_debug_id_str if profile.name is None else None,
                           "ns": profile.end_time - profile.start_time})
        runs.append((run.name, events))
    return runs


def _executions(runs):
    """The runs that executed a method: those with a Method::execute event."""
    return [events for _, events in runs if any(e["name"] == "Method::execute" for e in events)]


def profile(buf, source):
    """The report's profile: Method::execute per run (mean and p50, ms) and each event's mean ms
    per run, largest first. Raises ValueError when no run executed a method."""
    executions = _executions(read_runs(buf))
    if not executions:
        raise ValueError(f"{source} holds no Method::execute event")
    totals = [sum(e["ns"] for e in events if e["name"] == "Method::execute") / 1e6 for events in executions]
    rows = collections.OrderedDict()
    for events in executions:
        for e in events:
            if e["name"] in ("Method::execute", "OPERATOR_CALL"):
                continue
            runner = ("delegate" if e["delegate"] is not None or e["name"] == "DELEGATE_CALL" else
                      "kernels" if e["name"].startswith("native_call_") else "runtime")
            key = (runner, e["name"], e["instruction"])  # a delegate's events carry its call's instruction
            rows[key] = rows.get(key, 0.0) + e["ns"] / 1e6
    runs = len(executions)
    table = [{"runner": r, "event": name, "instruction": ins, "ms": total / runs}
             for (r, name, ins), total in rows.items()]
    table.sort(key=lambda row: (-row["ms"], row["event"]))
    return {"source": source, "runs": runs, "execute_ms": sum(totals) / runs,
            "p50_ms": statistics.median(totals), "rows": table}


def instructions(program, method):
    """{instruction index: ("kernel", "aten::add.out") or ("delegate", delegate index)} of one
    method of a .pte (pte_inspect.read_program's view): what an event's instruction ran."""
    from exporter.formats import program_summary

    for plan in program.execution_plan:
        if plan.name != method:
            continue
        names, found, index = program_summary.op_names(plan), {}, 0
        for chain in plan.chains:
            for instruction in chain.instructions:
                args = instruction.instr_args
                kind = program_summary.kind(args) if args is not None else None
                if kind == "KernelCall":
                    found[index] = ("kernel", names[args.op_index])
                elif kind == "DelegateCall":
                    found[index] = ("delegate", args.delegate_index)
                index += 1
        return found
    return {}


def _kernel_nodes(method_record, instruction_map):
    """{instruction index: node name} for the kernel calls outside delegates, aligned in order
    with the method's operators outside partitions (the emitter writes one call per operator)."""
    aliases = {"view": "executorch_prim.et_view.default"}
    nodes = [n for n in method_record["nodes"] if n["kind"] == "op" and n.get("partition") is None]
    found, at = {}, 0
    for index, (kind, name) in sorted(instruction_map.items()):
        if kind != "kernel":
            continue
        wanted = name.replace("::", ".")
        for j in range(at, len(nodes)):
            if aliases.get(nodes[j]["op"], nodes[j]["op"]) == wanted:
                found[index], at = nodes[j]["name"], j + 1
                break
    return found


def attribute(profile_data, instruction_map, method_record):
    """Names who ran each row (a backend and its partition, or the portable kernels and the
    operator's node) and returns {node name: {"time": text}} for the graph's details panel."""
    partitions = {p["index"]: p for p in method_record["partitions"]}
    kernels, extra = _kernel_nodes(method_record, instruction_map), {}
    for row in profile_data["rows"]:
        kind, what = instruction_map.get(row["instruction"], (None, None))
        share = f"{100.0 * row['ms'] / profile_data['execute_ms']:.1f}%" if profile_data["execute_ms"] else "-"
        if kind == "delegate" and what in partitions:
            row["runner"] = f"{partitions[what]['backend']} #{what}"
        elif kind == "kernel":
            row["runner"] = "portable"
            node = kernels.get(row["instruction"])
            row["nodes"] = [node] if node else []
            if node:
                extra[node] = {"time": f"{row['ms']:.3f} ms per run ({share} of Method::execute)"}
    return extra
