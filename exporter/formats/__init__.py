"""The files: writing and reading .pt2 (pt2), the .pte and .ptd FlatBuffers schema (pte_schema),
what a .pte's methods hold (program_summary) and its human-readable summary (pte_inspect).

May import core; never driver, actions or checks.
"""
