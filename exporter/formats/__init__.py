"""The files: writing and reading .pt2 (pt2), the .pte and .ptd FlatBuffers schema (pte_schema),
what a .pte's methods hold (program_summary) and its human-readable summary (pte_inspect), an
ETDump's events (etdump), and the reports' HTML: the page (report_html), graphs laid out by
graphviz (graph_dot), figures and charts (report_figures, report_charts), a program's report
(program_report) and the page across programs (dashboard); a graph snapshot's text (graph_text,
with its header graph_header), the .etvals value files on numpy (value_file) and a
numerics_test's values (case_values), which the tests' build actions write.

May import core; never driver, actions or checks.
"""
