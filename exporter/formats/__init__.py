"""The files: writing and reading .pt2 (pt2), what torch would unpickle in a .pt2 or an ETRecord
(archives) and the expressions it would run as Python (expressions), the .pte and .ptd
FlatBuffers schema (pte_schema) and a .ptd's entries (ptd), what a .pte's methods hold
(program_summary) and its human-readable summary (pte_inspect), an ETDump's events (etdump); a
graph snapshot's text (graph_text, with its header graph_header), the .etvals value files on
numpy (value_file) and a numerics_test's values (case_values), which the tests' build actions
write. The reports' pages are reports/'.

May import core; never driver, actions, checks or reports.
"""
