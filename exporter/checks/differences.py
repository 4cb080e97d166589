"""The largest differences a numerics_test measured: each runtime's outputs against the
reference, case by case, and the arm64 runner's against the x86-64 runner's where both ran.

The comparison of the two CPUs is reported, not judged: each runner is judged against the
reference by the test's tolerances, and a difference between them beyond those shows there. The
figures also go, as `numerics_differences.json`, into the test's undeclared outputs
(bazel-testlogs/<package>/<test>/test.outputs/), where `bazel run //bench:arm64_table` collects
them into docs/native.md's table, with the seconds the arm64 run took (what it adds to CI).
"""

import json
import os

import numpy as np

from exporter.checks import arrays

SUMMARY_FILE = "numerics_differences.json"

# The name of each side in reports and in the JSON.
CPUS = ("arm64", "native")
ACROSS = "arm64 vs native"


def largest_difference(actual, expected):
    """max |actual - expected| over one output (0 where both are NaN); None when the shapes or
    dtypes differ or a side has NaN where the other has none."""
    if arrays.shape(actual) != arrays.shape(expected) or arrays.dtype_name(actual) != arrays.dtype_name(expected):
        return None
    a, e = arrays.float64(actual), arrays.float64(expected)
    if bool((np.isnan(a) != np.isnan(e)).any()):
        return None
    with np.errstate(invalid="ignore"):
        diff = np.where(np.isnan(a) & np.isnan(e), 0.0, np.abs(a - e))
    return float(diff.max()) if diff.size else 0.0


def _worst(values):
    """The largest of a case's outputs' differences; None if any is None (not comparable)."""
    return None if any(v is None for v in values) else max(values, default=0.0)


class Differences:
    """{runtime: {case name: largest difference}}, plus each CPU's outputs for the comparison."""

    def __init__(self):
        self.largest = {}
        self.outputs = {cpu: {} for cpu in CPUS}
        self.arm64_seconds = None  # the arm64 runner's wall time, qemu's start included

    def record(self, runtime, case, actual, expected):
        """One call's outputs (lists of tensors) against the reference's."""
        if len(actual) == len(expected):
            worst = _worst([largest_difference(a, e) for a, e in zip(actual, expected)])
        else:
            worst = None
        self.largest.setdefault(runtime, {})[case] = worst
        if runtime in CPUS:
            self.outputs[runtime][case] = actual

    def compare_cpus(self, lines):
        """The arm64 runner's outputs against the x86-64 runner's, case by case; appends to lines."""
        native, arm64 = self.outputs["native"], self.outputs["arm64"]
        for case in [c for c in arm64 if c in native]:
            pairs = list(zip(arm64[case], native[case]))
            worst = _worst([largest_difference(a, n) for a, n in pairs]) if len(arm64[case]) == len(native[case]) else None
            self.largest.setdefault(ACROSS, {})[case] = worst
            shown = "outputs not comparable" if worst is None else f"largest difference {worst:.3g}"
            lines.append(f"  {case} [arm64 vs x86-64]: {shown} (reported, not judged)")

    def summary(self, config):
        """The JSON //bench:arm64_table reads."""
        return {
            "test": config.label,
            "program": config.program,
            "method": config.method if not config.steps else "steps",
            "reference": reference_label(config),
            "qemu_cpu": os.environ.get("QEMU_CPU", "max,sme=off") if "arm64" in config.runtimes else None,
            "largest_difference": self.largest,
            "arm64_seconds": self.arm64_seconds,
        }

    def write(self, config):
        """Writes summary() into the test's undeclared outputs, when Bazel gives it some."""
        folder = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
        if folder:
            with open(os.path.join(folder, SUMMARY_FILE), "w", encoding="utf-8") as f:
                json.dump(self.summary(config), f, indent=1, sort_keys=True)
                f.write("\n")


def reference_label(config):
    """What the test compares with: "eager <model>", "exported <torch_export>" or "program <label>"."""
    if config.reference == "program":
        return f"program {config.reference_program['label']}"
    if config.reference == "exported":
        return f"exported {config.exported_label}"
    return f"eager {config.model.label}"
