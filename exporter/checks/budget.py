"""The runner behind program_budget_test: a program's sizes against its limits and its golden
(run, on a contract.BudgetConfig).

The figures (the .pte's and .ptd's sizes, each method's planned memory) come from the
program's manifest, which the lowering wrote. The breakdown of what fills the .pte (named
data, constants, delegate payloads, the plan) and the largest planned tensors are read from the
.pte itself with pte_inspect's reader (0.15 s for ResNet-18's 47 MB). golden.py writes the
golden (`bazel run <test>.update`) through golden_text().
"""

import json
import math
import os
import sys

from exporter.checks import contract
from exporter.formats import program_summary, pte_inspect

GOLDEN_FORMAT = "rules_torch_export/budget/1"
TOP_CONTRIBUTORS = 6
TOP_PLANNED = 3


def short(n):
    """'44.6 MiB', '512 bytes'."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:,} bytes"


# '46,741,664 bytes (44.6 MiB)', as pte_inspect prints sizes.
human = pte_inspect.fmt_bytes


def _read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def figures(config, manifest):
    """{figure name: bytes}: ".pte", ".ptd" (external weights) and "planned <method>"."""
    found = {".pte": manifest["pte"]["size"]}
    if config.ptd:
        found[".ptd"] = manifest["ptd"]["size"]
    for method in config.methods:
        found[f"planned {method}"] = manifest["methods"][method]["planned_memory"]["bytes"]
    return found


def limits(config):
    """{figure name: limit in bytes} for the figures the test limits."""
    given = config.limits
    found = {".pte": given.pte_bytes, ".ptd": given.ptd_bytes}
    found.update({f"planned {m}": size for m, size in given.planned_bytes.items()})
    return {name: size for name, size in found.items() if size is not None}


def golden_text(config):
    """The golden's text: the current figures, and the toolchain that produced them."""
    manifest = _read_json(config.manifest)
    toolchain = manifest.get("toolchain", {})
    return json.dumps({
        "format": GOLDEN_FORMAT,
        "program": config.program,
        "figures": figures(config, manifest),
        "toolchain": {k: toolchain[k] for k in ("executorch", "torch") if k in toolchain},
    }, indent=2, sort_keys=True) + "\n"


def growth_percent(now, before):
    if before == 0:
        return 0.0 if now == 0 else math.inf
    return (now - before) * 100.0 / before


def contributors(buf):
    """[(bytes, what)] that fill the .pte (its bytes, buf), biggest first."""
    summary = pte_inspect.summarize_bytes(buf)
    program = pte_inspect.read_program(buf)
    found, inline = [], 0
    named = summary["named_data"]
    if named["bytes"]:
        found.append((named["bytes"], f"named data: {named['entries']} entries (delegate weights, loaded by key)"))
    constants = summary["constants"]
    if constants["bytes"]:
        found.append((constants["bytes"], f"constants ({constants['location']}): {constants['tensors']} tensor(s)"))
        inline += constants["bytes"] if constants["location"] == "inline" else 0
    for plan in program.execution_plan:
        payloads = {}
        for delegate in plan.delegates:
            size = program_summary.delegate_bytes(program, delegate.processed)
            where = program_summary.enum_name(delegate.processed.location).lower()
            inline += size if where == "inline" else 0
            count, total = payloads.get((delegate.id, where), (0, 0))
            payloads[(delegate.id, where)] = (count + 1, total + size)
        for (delegate_id, where), (count, total) in sorted(payloads.items()):
            found.append((total, f"{delegate_id} payload, method {plan.name}: {count} delegate(s), {where}"))
    plan_bytes = summary["flatbuffer_bytes"] - inline
    found.append((plan_bytes, "execution plan (instructions, values, operator table; the flatbuffer "
                              "without inline payloads and constants)"))
    return sorted(found, key=lambda item: (-item[0], item[1]))


def planned_tensors(buf, method):
    """[(bytes, what)] of the method's largest planned tensors (sizes are upper bounds) in the
    .pte held in buf."""
    program = pte_inspect.read_program(buf)
    plan = next(p for p in program.execution_plan if p.name == method)
    roles = {index: f"input {i}" for i, index in enumerate(plan.inputs)}
    roles.update({index: f"output {i}" for i, index in enumerate(plan.outputs)})
    found = []
    for index, value in enumerate(plan.values):
        tensor = value.val
        if tensor is None or program_summary.kind(tensor) != "Tensor" or tensor.allocation_info is None:
            continue
        record = program_summary.value_record(tensor)
        shape = f"{record['dtype']}[{', '.join(map(str, record['sizes']))}]"
        found.append((record["nbytes"], f"value {index}{' (' + roles[index] + ')' if index in roles else ''} {shape}"))
    return sorted(found, key=lambda item: (-item[0], item[1]))[:TOP_PLANNED]


def _row(name, now, limit, before, allowed):
    """(line, [(kind, sentence)]) for one figure; kind is "limit" or "growth"."""
    failures, cells = [], [f"{name:<18}", f"{human(now):<32}"]
    if limit is not None:
        cells.append(f"limit {limit:,} ({short(limit)})")
        if now > limit:
            failures.append(("limit", f"{name} is {human(now)}, over its limit of {human(limit)} by {now - limit:,} bytes"))
    if before is not None:
        growth = growth_percent(now, before)
        cells.append(f"golden {before:,} ({growth:+.2f}%, allowed +{allowed:g}%)")
        if growth > allowed:
            failures.append(("growth", f"{name} grew {growth:+.2f}% since the golden ({before:,} -> {now:,} bytes), "
                                       f"more than max_growth_percent = {allowed:g}"))
    return "  " + "  ".join(cells) + ("  ok" if not failures else "  FAIL"), failures


def _golden_figures(config):
    """(figures recorded in the golden, toolchain it names), or raises FileNotFoundError."""
    recorded = _read_json(config.golden)
    return recorded.get("figures", {}), recorded.get("toolchain", {})


def run(config):
    """(ok, report text) of one program_budget_test (a contract.BudgetConfig)."""
    manifest = _read_json(config.manifest)
    now, limit = figures(config, manifest), limits(config)
    allowed = config.max_growth_percent
    update = f"bazel run {config.update_target}"
    golden, recorded_toolchain, problems = {}, {}, []
    if config.golden:
        if not os.path.exists(config.golden):
            return False, (f"FAIL {config.label}: the golden {config.golden} does not exist. "
                           f"Record the current figures with:\n  {update}\n")
        golden, recorded_toolchain = _golden_figures(config)
        problems += [("growth", f"the golden has no figure for {name}") for name in now if name not in golden]
    lines = [f"{config.label}: the budget of {config.program}"]
    failures = []
    for name, size in now.items():
        line, failed = _row(name, size, limit.get(name), golden.get(name), allowed)
        lines.append(line)
        failures += failed
    with open(config.pte, "rb") as f:
        pte = f.read()
    lines.append("What fills the .pte, biggest first:")
    for size, what in contributors(pte)[:TOP_CONTRIBUTORS]:
        lines.append(f"  {human(size):<32}  {100.0 * size / manifest['pte']['size']:5.1f}%  {what}")
    if config.ptd:
        tensors = pte_inspect.summarize_ptd(config.ptd)["tensors"]
        lines.append(f"Largest tensors of the .ptd ({len(tensors)} in all):")
        for t in sorted(tensors, key=lambda t: (-t["bytes"], t["key"]))[:TOP_CONTRIBUTORS]:
            lines.append(f"  {human(t['bytes']):<32}  {t['key']}")
    for method in config.methods:
        if now[f"planned {method}"]:
            lines.append(f"Largest planned tensors of {method} (upper bounds):")
            lines += [f"  {human(size):<32}  {what}" for size, what in planned_tensors(pte, method)]
    failures += problems
    shrunk = [name for name, size in now.items() if name in golden and allowed is not None
              and growth_percent(size, golden[name]) < -allowed]
    if shrunk:
        lines.append(f"Note: {', '.join(shrunk)} shrank past the allowance; lower the golden with: {update}")
    if not failures:
        return True, "\n".join(lines) + "\n"
    lines.append(f"FAIL {config.label}:")
    lines += [f"  {sentence}" for _, sentence in failures]
    current = {k: manifest.get("toolchain", {}).get(k) for k in ("executorch", "torch")}
    if recorded_toolchain and recorded_toolchain != current:
        lines.append(f"The golden was recorded with {recorded_toolchain}; this toolchain is {current}, "
                     f"whose lowering may explain the change.")
    kinds = {kind for kind, _ in failures}
    if "limit" in kinds:
        lines.append(f"To fix: shrink the program, or raise the limit on {config.label} in its BUILD file.")
    if "growth" in kinds:
        lines.append(f"If the growth is intended, record the new figures (and review the golden's diff) with:\n  {update}")
    return False, "\n".join(lines) + "\n"


def main(argv):
    return contract.main(argv, contract.BudgetConfig, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
