"""What the exporter's Python defines that the toolchain's repository rules use (generated from
exporter/facts.py by `bazel run //exporter:update_exporter_facts`; do not edit by hand;
//exporter:facts_test checks that it is current)."""

KERNEL_LIBRARIES = [
    "portable",
    "optimized",
    "quantized",
]

DEFAULT_DEADLINE_SECONDS = 3600
