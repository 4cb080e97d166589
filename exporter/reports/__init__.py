"""The reports: a program's page and the page across programs, drawn by their own actions.

report (the ProgramReport action: a program's files -> <name>.report.html and its summary) and
dashboard (the ProgramDashboard action: the page across programs), and the renderer they share:
the page (report_html: page, style, script), graphs laid out by graphviz (graph_dot), figures
and charts (report_figures, report_charts), a program's report (program_report) and the page
across programs (dashboard_page).

A tool set of their own (//exporter:report_srcs), apart from the exporting toolchain's sources:
only the actions that draw a report have them, so editing a report's code or its CSS re-runs
reports only, never an export or a lowering. Nothing outside reports and checks imports it.

May import core and formats; never driver, actions or checks.
"""
