"""The runner behind foundation_budget_test: the bytes an app ships for programs that share a
foundation's .ptd, against the same programs stand-alone (run, on a contract.SharedBudgetConfig).

Shipped, for the first n programs: the foundation's .ptd once plus their .pte files. Stand-alone:
their counterparts' .pte (and .ptd) files. Sizes are the files' own. The test passes when the
ratio for all the programs is at most max_ratio; the report gives it for every n.

run(config) is check(config), a Result, then render(config, result), its report.
"""

import dataclasses
import os
import sys

from exporter.checks import contract
from exporter.checks.budget import short


@dataclasses.dataclass(frozen=True)
class Row:
    """One program: its .pte's bytes, and its stand-alone counterpart's."""

    program: str
    pte: int
    standalone: str
    standalone_bytes: int


@dataclasses.dataclass(frozen=True)
class Result:
    ptd: int
    rows: tuple[Row, ...]

    def totals(self, n):
        """(shipped, stand-alone) bytes of the first n programs."""
        rows = self.rows[:n]
        return self.ptd + sum(r.pte for r in rows), sum(r.standalone_bytes for r in rows)

    @property
    def ratio(self):
        shipped, alone = self.totals(len(self.rows))
        return shipped / alone


def check(config):
    """The sizes of every file the test compares."""
    rows = tuple(Row(p.program, os.path.getsize(p.pte), p.standalone,
                     sum(os.path.getsize(f) for f in p.standalone_files)) for p in config.pairs)
    return Result(os.path.getsize(config.ptd), rows)


def render(config, result):
    ok = result.ratio <= config.max_ratio
    lines = [f"{config.label}: {len(result.rows)} programs sharing {config.foundation} "
             f"({short(result.ptd)} of weights, shipped once) against stand-alone programs",
             f"  {'program':<44} {'.pte':>10}   stand-alone {'':<30} {'bytes':>10}"]
    for row in result.rows:
        lines.append(f"  {row.program:<44} {short(row.pte):>10}   {row.standalone:<42} {short(row.standalone_bytes):>10}")
    for n in range(1, len(result.rows) + 1):
        shipped, alone = result.totals(n)
        lines.append(f"  first {n}: shipped {shipped:,} bytes, stand-alone {alone:,} bytes: ratio {shipped / alone:.3f}")
    verdict = "within" if ok else "OVER"
    lines.append(f"  ratio {result.ratio:.3f} {verdict} max_ratio {config.max_ratio}")
    if not ok:
        lines.append("Sharing saves less than the test expects: check that each program keeps only its own tensors "
                     "in its .pte (its manifest's \"foundation\" record), or raise max_ratio.")
    return ok, "\n".join(lines) + "\n"


def run(config):
    """(ok, report) of a contract.SharedBudgetConfig."""
    return render(config, check(config))


def main(argv):
    return contract.main(argv, contract.SharedBudgetConfig, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
