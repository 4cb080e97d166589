"""program_budget_test's max_instructions: each method's instructions per call against its budget
and its golden (budget.py renders them with the sizes).

The counts come from the test's InstructionCount action (exporter/actions/instructions.py), which
ran the native runner under valgrind's callgrind. A count depends on the CPU the program sees,
which under valgrind is the CPU valgrind presents, so every failure says where it was counted.
"""

import dataclasses
import json

PREFIX = "instructions "  # a count's figure name: "instructions forward"


def read(config):
    """The counts' file of a contract.BudgetConfig, or None without max_instructions."""
    if not config.instructions:
        return None
    with open(config.instructions, encoding="utf-8") as f:
        return json.load(f)


def _features(cpu):
    return "".join(f", {name}" for key, name in (("avx2", "AVX2"), ("avx512f", "AVX-512")) if cpu.get(key))


def counted_on(counts):
    """Where the counts were made: "AMD EPYC (AuthenticAMD family 25), which valgrind-3.19.0
    presents as GenuineIntel family 6 model 60, AVX2"."""
    host, seen = counts.get("host_cpu") or {}, counts.get("cpu") or {}
    text = f"{host.get('name', '?')} ({host.get('vendor', '?')} family {host.get('family', '?')})"
    if seen:
        text += (f", which {counts.get('valgrind', 'valgrind')} presents as {seen['vendor']} family "
                 f"{seen['family']} model {seen['model']}{_features(seen)}")
    return text


def figures(config, counts):
    """{"instructions <method>": one call's instructions} for the methods the test budgets."""
    if counts is None:
        return {}
    return {PREFIX + method: counts["methods"][method] for method in sorted(config.limits.instructions)}


@dataclasses.dataclass(frozen=True)
class Count:
    """One method's instructions per call against its budget and its golden's."""

    program: str
    method: str
    now: int
    limit: int | None
    before: int | None  # the golden's count, or None without a golden
    allowed: float | None  # max_growth_percent
    where: str  # counted_on(...)

    @property
    def name(self):
        return PREFIX + self.method

    def growth(self):
        return (self.now - self.before) * 100.0 / self.before if self.before else 0.0

    def failures(self):
        """[(kind, sentence)]; kind is "limit" or "growth". Each sentence is one line."""
        failures = []
        if self.limit is not None and self.now > self.limit:
            over = (self.now - self.limit) * 100.0 / self.limit
            failures.append(("limit", f"{self.program} method {self.method} ran {self.now:,} instructions per call, "
                                      f"over its budget of {self.limit:,} by {over:.1f}% (counted on {self.where})"))
        if self.before is not None and self.allowed is not None and self.growth() > self.allowed:
            failures.append(("growth", f"{self.program} method {self.method} ran {self.now:,} instructions per call, "
                                       f"{self.growth():+.2f}% since the golden's {self.before:,}, more than "
                                       f"max_growth_percent = {self.allowed:g} (counted on {self.where})"))
        return failures

    def row(self):
        """Its line of the report."""
        # the sizes' columns: a name of 18 characters, then a figure of 32
        cells = [f"{self.name:<18}", f"{self.now:,} per call".ljust(32 - max(0, len(self.name) - 18))]
        if self.limit is not None:
            cells.append(f"limit {self.limit:,}")
        if self.before is not None:
            cells.append(f"golden {self.before:,} ({self.growth():+.2f}%, allowed +{self.allowed:g}%)")
        return "  " + "  ".join(cells) + ("  ok" if not self.failures() else "  FAIL")


def check(config, counts, golden):
    """The Counts of a config's budgeted methods; golden is the golden's {figure: value}."""
    if counts is None:
        return ()
    where = counted_on(counts)
    return tuple(Count(config.program, method, counts["methods"][method], config.limits.instructions.get(method),
                       golden.get(PREFIX + method), config.max_growth_percent, where)
                 for method in sorted(config.limits.instructions))


def report_lines(counts, recorded_on):
    """The lines on the counts beside the figures: the loading, other threads, a CPU that changed."""
    if counts is None:
        return []
    lines = [f"Instructions counted by callgrind in one thread on {counted_on(counts)}; loading the program "
             f"and its methods (process start included) ran {counts['load']:,}, apart from the calls."]
    if counts.get("other_threads"):
        lines.append(f"Other threads ran {counts['other_threads']:,} instructions, not counted (a thread pool's idle workers).")
    if recorded_on and recorded_on != counted_on(counts):
        lines.append(f"The golden's counts were made on {recorded_on}; the count depends on the CPU valgrind presents.")
    return lines
