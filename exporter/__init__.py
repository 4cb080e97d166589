"""rules_torch_export's exporter: the Python tool behind every exporter action and test runner.

Five packages, one per layer; each one's __init__ says what lives there and what it may import:

  driver    the process: command line, one request, the persistent worker, isolation
  actions   one module per build action (export, lower, quantize, ...) and the action registry
  checks    the runners behind the test rules (numerics, snapshots, budgets, ...)
  formats   reading and writing the files: .pt2, the .pte/.ptd schema and summary
  core      what the others share: shape specs, models, manifests, kernels, errors

    driver ──> actions ──> formats ──> core
                  ^
    checks ───────┘ (and formats, core)

An arrow is "may import". Nothing imports checks, so the toolchain's sources (every exporter
action's key includes them, //exporter:exporter_srcs) are every package but checks: editing a
test runner rebuilds no program. exporter/imports_test.py enforces these rules, and
docs/architecture.md draws the graph the code has.
"""
