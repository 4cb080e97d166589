"""The test runners behind the test rules (numerics_test, graph_snapshot_test,
program_budget_test, bundled_program_test): each one a module with run(config) -> (ok, report)
on a typed config (checks.contract) read from the JSON its rule writes, and main(argv).

numerics and steps (stateful calls) judge a .pte against its reference, from the values their
build action computed (actions/numerics_values.py), with numpy (arrays, differences) and the
native runners (native, etvals); divergence says where it departs; golden compares the text a
snapshot's build action rendered (formats/graph_text.py; snapshot is its face here) or rewrites
goldens (snapshot_diff draws a failing one's graphs side by side); budget checks sizes;
bundled_cases runs a .bpte's cases. A test that passes imports neither torch nor ExecuTorch.

May import actions, core, formats and reports (snapshot_diff draws with the reports' graphs,
profile writes a report). Nothing outside checks imports it, so it stays out of the toolchain's
sources: editing a test runner rebuilds no program.
"""
