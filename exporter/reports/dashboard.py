"""The ProgramDashboard action: programs' report summaries -> one page across them
(reports/dashboard_page.py). It reads only JSON: each program's <name>.report.json, and the configs
that program_budget_test and numerics_test write (their label, program, limits and SQNR floor),
and the instruction counts of budgets with max_instructions (actions/instructions.py).
"""

import os

from exporter.core import atomic
from exporter.core.errors import UserError
from exporter.reports import dashboard_page, program_report
from exporter.reports.report import read_json


def _summary(path):
    found = read_json(path, "the report summary")
    if not isinstance(found, dict) or found.get("format") != program_report.SUMMARY_FORMAT:
        raise UserError(f"{os.path.basename(path)} is not a report summary ({program_report.SUMMARY_FORMAT}); "
                        f"name executorch_program targets in programs")
    return found


def _test(path, keys):
    """The fields `keys` of a test rule's config (contract.BudgetConfig or NumericsConfig)."""
    found = read_json(path, "the test config")
    if not isinstance(found, dict) or not isinstance(found.get("label"), str):
        raise UserError(f"{os.path.basename(path)} is not a test's config; name program_budget_test and "
                        f"numerics_test targets in budgets and numerics")
    return {key: found.get(key) for key in keys}


def run(config):
    """Runs the action for a DashboardConfig."""
    summaries = [_summary(p) for p in config.summaries]
    budgets = [_test(p, ("label", "program", "limits")) for p in config.budgets]
    counts = {found["program"]: found["methods"] for found in (read_json(p, "the instruction counts")
                                                              for p in config.instructions)}
    for budget in budgets:  # each method's instructions per call, beside the figures of its manifest
        budget["counts"] = counts.get(budget["program"], {})
    numerics = [_test(p, ("label", "program", "min_sqnr_db")) for p in config.numerics]
    html_path = config.outputs["html"]
    text = dashboard_page.render(summaries, config.title, config.package, budgets, numerics)
    atomic.write_bytes(html_path, text.encode("utf-8"))
