"""The runner behind program_budget_test: a program's sizes against its limits and its golden
(run, on a contract.BudgetConfig).

The figures (the .pte's and .ptd's sizes, each method's planned memory) come from the
program's manifest, which the lowering wrote. The breakdown of what fills the .pte (named
data, constants, delegate payloads, the plan) and the largest planned tensors are read from the
.pte itself with pte_inspect's reader (0.15 s for ResNet-18's 47 MB). golden.py writes the
golden (`bazel run <test>.update`) through golden_text().

run(config) is check(config), a Result of every figure, then render(config, result), its report.
"""

import dataclasses
import json
import math
import os
import sys

from exporter.checks import contract, instruction_budget
from exporter.core import backends
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


def delegate_bytes(manifest, backend):
    """The bytes of a backend's delegate blobs (by its name), over every method of a manifest."""
    delegate_id = backends.record(backend).delegate_id
    return sum(m.get("delegates", {}).get(delegate_id, {}).get("bytes", 0) for m in manifest["methods"].values())


# Vela's byte figures of a program Vela compiled: {figure name: the field of Limits and of the
# manifest's "vela" totals}, a figure only when the test limits it.
VELA_BYTES = {"Vela SRAM": "sram_bytes", "Vela flash": "flash_bytes"}


def vela_totals(manifest):
    """The manifest's Vela totals (backend_hooks/vela.py), or a one-line ValueError: the rule lets only
    the budget of a program of a backend with Vela's figures (its record's vela_figures) bound them,
    so a manifest without them is a lowering in which Vela compiled nothing."""
    found = manifest.get("vela")
    if not isinstance(found, dict):
        raise ValueError(f"{manifest.get('label')} has no Vela figures in its manifest: Vela compiled no "
                         f"delegate of it; remove the budget's Vela limits")
    return found


def figures(config, manifest):
    """{figure name: bytes}: ".pte", ".ptd" (external weights), "planned <method>", and
    "delegates <backend>" for each backend the test limits, and Vela's SRAM and flash when limited."""
    found = {".pte": manifest["pte"]["size"]}
    if config.ptd:
        found[".ptd"] = manifest["ptd"]["size"]
    for method in config.methods:
        found[f"planned {method}"] = manifest["methods"][method]["planned_memory"]["bytes"]
    for backend in sorted(config.limits.delegate_bytes):
        found[f"delegates {backend}"] = delegate_bytes(manifest, backend)
    for name, key in VELA_BYTES.items():
        if getattr(config.limits, key) is not None:
            found[name] = vela_totals(manifest)[key]
    return found


def bounds(config, manifest):
    """The Bounds of Vela's figures that are not bytes: the NPU's share of the operators, the
    estimated time."""
    given, found = config.limits, []
    if given.min_npu_fraction is not None:
        found.append(Bound("Vela NPU fraction", vela_totals(manifest)["npu_fraction"], given.min_npu_fraction,
                           at_least=True))
    if given.estimated_ms is not None:
        found.append(Bound("Vela estimated", vela_totals(manifest)["estimated_ms"], given.estimated_ms, unit=" ms"))
    return found


def limits(config):
    """{figure name: limit in bytes} for the figures the test limits."""
    given = config.limits
    found = {".pte": given.pte_bytes, ".ptd": given.ptd_bytes}
    found.update({f"planned {m}": size for m, size in given.planned_bytes.items()})
    found.update({f"delegates {b}": size for b, size in given.delegate_bytes.items()})
    found.update({name: getattr(given, key) for name, key in VELA_BYTES.items()})
    return {name: size for name, size in found.items() if size is not None}


def golden_text(config):
    """The golden's text: the current figures, and the toolchain that produced them."""
    manifest = _read_json(config.manifest)
    toolchain = manifest.get("toolchain", {})
    counts = instruction_budget.read(config)
    text = {
        "format": GOLDEN_FORMAT,
        "program": config.program,
        "figures": dict(figures(config, manifest), **instruction_budget.figures(config, counts)),
        "toolchain": {k: toolchain[k] for k in ("executorch", "torch") if k in toolchain},
    }
    if counts is not None:  # a key only then: the goldens of budgets without counts keep their bytes
        text["instructions_counted_on"] = instruction_budget.counted_on(counts)
    return json.dumps(text, indent=2, sort_keys=True) + "\n"


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


@dataclasses.dataclass(frozen=True)
class Figure:
    """One figure of a program against its limit and its golden's."""

    name: str  # ".pte", ".ptd" or "planned <method>"
    now: int
    limit: int | None
    before: int | None  # the golden's figure, or None without a golden
    allowed: float | None  # max_growth_percent

    def failures(self):
        """[(kind, sentence)]; kind is "limit" or "growth"."""
        failures = []
        if self.limit is not None and self.now > self.limit:
            failures.append(("limit", f"{self.name} is {human(self.now)}, over its limit of {human(self.limit)} "
                                      f"by {self.now - self.limit:,} bytes"))
        if self.before is not None and growth_percent(self.now, self.before) > self.allowed:
            failures.append(("growth", f"{self.name} grew {growth_percent(self.now, self.before):+.2f}% since the "
                                       f"golden ({self.before:,} -> {self.now:,} bytes), more than "
                                       f"max_growth_percent = {self.allowed:g}"))
        return failures

    def row(self):
        """Its line of the report."""
        cells = [f"{self.name:<18}", f"{human(self.now):<32}"]
        if self.limit is not None:
            cells.append(f"limit {self.limit:,} ({short(self.limit)})")
        if self.before is not None:
            cells.append(f"golden {self.before:,} ({growth_percent(self.now, self.before):+.2f}%, "
                         f"allowed +{self.allowed:g}%)")
        return "  " + "  ".join(cells) + ("  ok" if not self.failures() else "  FAIL")


@dataclasses.dataclass(frozen=True)
class Bound:
    """A figure that is not bytes against its limit, a maximum or (at_least) a minimum. Not in
    the golden: a share or a time has no growth in bytes."""

    name: str
    now: float
    limit: float
    at_least: bool = False
    unit: str = ""

    def failures(self):
        if (self.now < self.limit) if self.at_least else (self.now > self.limit):
            side = "under its minimum" if self.at_least else "over its limit"
            return [("limit", f"{self.name} is {self.now:g}{self.unit}, {side} of {self.limit:g}{self.unit}")]
        return []

    def row(self):
        cells = [f"{self.name:<18}", f"{f'{self.now:g}{self.unit}':<32}",
                 f"{'minimum' if self.at_least else 'limit'} {self.limit:g}{self.unit}"]
        return "  " + "  ".join(cells) + ("  ok" if not self.failures() else "  FAIL")


@dataclasses.dataclass(frozen=True)
class Result:
    """What a program_budget_test found, before it is rendered."""

    figures: tuple = ()  # Figure
    bounds: tuple = ()  # Bound
    counts: tuple = ()  # instruction_budget.Count
    count_notes: tuple = ()  # instruction_budget.report_lines
    pte_bytes: int = 0
    contributors: tuple = ()  # (bytes, what) that fill the .pte, the largest
    ptd_tensors: tuple = ()  # the .ptd's tensors (pte_inspect's records), the largest
    ptd_count: int | None = None  # None without a .ptd
    planned: dict = dataclasses.field(default_factory=dict)  # {method: [(bytes, what)]}
    delegates: dict = dataclasses.field(default_factory=dict)  # pte_inspect.delegates_by_backend
    missing: tuple = ()  # figures the golden lacks
    shrunk: tuple = ()  # figures that shrank past the allowance
    recorded_toolchain: dict = dataclasses.field(default_factory=dict)  # the golden's
    toolchain: dict = dataclasses.field(default_factory=dict)  # this build's
    no_golden: bool = False  # the golden file does not exist

    def failures(self):
        """[(kind, sentence)], the figures' first, then the golden's missing figures."""
        found = [failure for figure in self.figures + self.bounds + self.counts for failure in figure.failures()]
        return found + [("growth", f"the golden has no figure for {name}") for name in self.missing]

    @property
    def ok(self):
        return not self.no_golden and not self.failures()


def _golden_figures(config):
    """(figures recorded in the golden, toolchain it names), or raises FileNotFoundError."""
    recorded = _read_json(config.golden)
    return recorded.get("figures", {}), recorded.get("toolchain", {})


def _ptd_tensors(config):
    """(the .ptd's largest tensors, their number), or ((), None) without a .ptd."""
    if not config.ptd:
        return (), None
    tensors = pte_inspect.summarize_ptd(config.ptd)["tensors"]
    return tuple(sorted(tensors, key=lambda t: (-t["bytes"], t["key"]))[:TOP_CONTRIBUTORS]), len(tensors)


def check(config):
    """The Result of a contract.BudgetConfig: its figures against limits and golden, and what
    fills the program."""
    if config.golden and not os.path.exists(config.golden):
        return Result(no_golden=True)
    manifest = _read_json(config.manifest)
    now, limit, allowed = figures(config, manifest), limits(config), config.max_growth_percent
    golden, recorded_toolchain = _golden_figures(config) if config.golden else ({}, {})
    counts = instruction_budget.read(config)
    counted = instruction_budget.figures(config, counts)
    recorded_on = _read_json(config.golden).get("instructions_counted_on") if config.golden and counted else None
    with open(config.pte, "rb") as f:
        pte = f.read()
    ptd_tensors, ptd_count = _ptd_tensors(config)
    return Result(
        figures=tuple(Figure(name, size, limit.get(name), golden.get(name), allowed) for name, size in now.items()),
        bounds=tuple(bounds(config, manifest)),
        counts=instruction_budget.check(config, counts, golden),
        count_notes=tuple(instruction_budget.report_lines(counts, recorded_on)),
        pte_bytes=manifest["pte"]["size"],
        contributors=tuple(contributors(pte)[:TOP_CONTRIBUTORS]),
        ptd_tensors=ptd_tensors,
        ptd_count=ptd_count,
        planned={m: planned_tensors(pte, m) for m in config.methods if now[f"planned {m}"]},
        delegates=pte_inspect.delegates_by_backend(pte_inspect.summarize_bytes(pte)),
        missing=tuple(name for name in dict(now, **counted) if config.golden and name not in golden),
        shrunk=tuple(name for name, size in dict(now, **counted).items() if name in golden and allowed is not None
                     and growth_percent(size, golden[name]) < -allowed),
        recorded_toolchain=recorded_toolchain,
        toolchain={k: manifest.get("toolchain", {}).get(k) for k in ("executorch", "torch")},
    )


def _breakdown(result):
    """The lines on what fills the .pte and the .ptd, and the largest planned tensors."""
    lines = pte_inspect.format_delegates(result.delegates) + ["What fills the .pte, biggest first:"]
    lines += [f"  {human(size):<32}  {100.0 * size / result.pte_bytes:5.1f}%  {what}" for size, what in result.contributors]
    if result.ptd_count is not None:
        lines.append(f"Largest tensors of the .ptd ({result.ptd_count} in all):")
        lines += [f"  {human(t['bytes']):<32}  {t['key']}" for t in result.ptd_tensors]
    for method, tensors in result.planned.items():
        lines.append(f"Largest planned tensors of {method} (upper bounds):")
        lines += [f"  {human(size):<32}  {what}" for size, what in tensors]
    return lines


def _advice(config, result, update):
    """The closing lines of a failed budget: what failed, and how to fix it."""
    failures = result.failures()
    lines = [f"FAIL {config.label}:"] + [f"  {sentence}" for _, sentence in failures]
    if result.recorded_toolchain and result.recorded_toolchain != result.toolchain:
        lines.append(f"The golden was recorded with {result.recorded_toolchain}; this toolchain is "
                     f"{result.toolchain}, whose lowering may explain the change.")
    kinds = {kind for kind, _ in failures}
    if "limit" in kinds:
        lines.append(f"To fix: shrink the program{' or make it faster' if result.counts else ''}, or raise the limit on "
                     f"{config.label} in its BUILD file.")
    if "growth" in kinds:
        lines.append(f"If the growth is intended, record the new figures (and review the golden's diff) with:\n  {update}")
    return lines


def render(config, result):
    """The report text of a Result."""
    update = f"bazel run {config.update_target}"
    if result.no_golden:
        return (f"FAIL {config.label}: the golden {config.golden} does not exist. "
                f"Record the current figures with:\n  {update}\n")
    rows = [f.row() for f in result.figures + result.bounds + result.counts]
    lines = [f"{config.label}: the budget of {config.program}"] + rows + list(result.count_notes)
    lines += _breakdown(result)
    if result.shrunk:
        lines.append(f"Note: {', '.join(result.shrunk)} shrank past the allowance; lower the golden with: {update}")
    if not result.ok:
        lines += _advice(config, result, update)
    return "\n".join(lines) + "\n"


def run(config):
    """(ok, report text) of one program_budget_test (a contract.BudgetConfig)."""
    result = check(config)
    return result.ok, render(config, result)


def main(argv):
    return contract.main(argv, contract.BudgetConfig, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
