"""The runner behind numerics_test: the .pte in the ExecuTorch runtime against the eager model
(run, on a contract.NumericsConfig; steps.py runs the tests with steps).

Inputs are seeded and cover every dynamic dim at its min, its tracing example and its max
(all dims together), plus the shapes the test lists. For each output it reports the worst
absolute error, and the worst relative error over elements whose expected magnitude exceeds
atol. A case fails when any element has |actual - expected| > atol + rtol * |expected|
(torch.allclose's rule), when shapes or dtypes differ, or when the runtime rejects the input.

The inputs, the reference's outputs and the Python runtime's outputs come from the test's build
action (actions/numerics_values.py, in the warm worker), so the test imports numpy, not torch or
ExecuTorch: it compares, runs the native runners, and imports torch only to explain a failure
(divergence.py). A config that names no value files (a run outside Bazel) computes them here.
"""

import importlib
import math
import sys
import time

import numpy as np

from exporter.checks import arrays, contract, differences
from exporter.core import backend_site, backends, releases
from exporter.core.case_inputs import cases, make_inputs  # noqa: F401  (numerics.cases, numerics.make_inputs)
from exporter.formats import case_values

# float32 defaults of the portable kernels, which follow ATen closely; a backend's record has its
# own (XNNPACK's, 1e-3 and 1e-4: it reorders and fuses arithmetic).
PORTABLE_TOLERANCES = (1e-4, 1e-5)  # (rtol, atol)


def default_tolerances(names):
    """The loosest default among the program's backends (portable when it has none)."""
    rtol, atol = PORTABLE_TOLERANCES
    for name in names:
        r, a = backends.record(name).tolerances
        rtol, atol = max(rtol, r), max(atol, a)
    return rtol, atol


def tolerances(config):
    """(rtol, atol) of a test's config (its .tolerances, else its .backends' defaults)."""
    default_rtol, default_atol = default_tolerances(config.backends)
    rtol = config.tolerances.rtol if config.tolerances.rtol is not None else default_rtol
    atol = config.tolerances.atol if config.tolerances.atol is not None else default_atol
    return rtol, atol


def shapes_text(values):
    """'[4, 3], [8, 0]': the sizes of the tensors a case feeds, so derived sizes show."""
    return ", ".join(f"[{', '.join(map(str, arrays.shape(v)))}]" for v in values if hasattr(v, "shape"))


def compare(actual, expected, rtol, atol):
    """(ok, report) for one output tensor (value-file Tensors, numpy arrays or torch tensors)."""
    described = arrays.describe(expected)
    if arrays.shape(actual) != arrays.shape(expected) or arrays.dtype_name(actual) != arrays.dtype_name(expected):
        return False, f"{described} expected, the runtime gave {arrays.describe(actual)}"
    a, e = arrays.float64(actual), arrays.float64(expected)
    with np.errstate(invalid="ignore", divide="ignore"):
        both_nan = np.isnan(a) & np.isnan(e)  # NaN where the model gives NaN is a match
        nan_mismatch = bool((np.isnan(a) != np.isnan(e)).any())
        diff = np.where(both_nan, 0.0, np.abs(a - e))
        worst_abs = float(diff.max()) if diff.size else 0.0
        big = np.abs(e) > atol
        worst_rel = float((diff[big] / np.abs(e)[big]).max()) if bool(big.any()) else 0.0
        ok = not nan_mismatch and bool(((diff <= atol + rtol * np.abs(e)) | both_nan).all())
    report = f"{described}: worst abs error {worst_abs:.3g}, worst rel error {worst_rel:.3g}"
    if nan_mismatch:
        report += ", NaN where the reference has none (or the reverse)"
    return ok, report


def sqnr_db(actual, expected):
    """Signal-to-quantization-noise ratio in dB: 10 log10(sum e^2 / sum (a - e)^2)."""
    e = arrays.float64(expected)
    noise = arrays.float64(actual) - e
    signal, error = float((e * e).sum()), float((noise * noise).sum())
    if error == 0:
        return float("inf")
    return 10 * math.log10(signal / error) if signal > 0 else float("-inf")


def top1_matches(actual, expected):
    """(rows whose argmax over the last axis agrees, rows), or None for fewer than 2 axes."""
    shape = arrays.shape(expected)
    if len(shape) < 2 or arrays.shape(actual) != shape:
        return None
    a = arrays.float64(actual).reshape(-1, shape[-1])
    e = arrays.float64(expected).reshape(-1, shape[-1])
    return int((a.argmax(-1) == e.argmax(-1)).sum()), e.shape[0]


def reduced_precision(config):
    """{backend title: precision} of the program's backends whose runtime computes in less than
    float32 on this machine (their record's precision_check: OpenVINO on a CPU with bf16 units)."""
    found = {}
    for name in config.backends:
        record = backends.BY_NAME.get(name)
        if record is not None and record.precision_check:
            backend_site.activate(config.backend_packages)
            precision = importlib.import_module(record.precision_check).runtime_precision()
            if precision != "f32":
                found[record.title] = precision
    return found


class Floors:
    """The accuracy floors of a numerics_test: SQNR per output and case, top-1 over all cases."""

    def __init__(self, config):
        self.sqnr = config.min_sqnr_db
        self.top1 = config.min_top1_agreement
        self.reduced = {}  # {backend title: precision} that set the SQNR floor
        no_setting = self.sqnr is None and self.top1 is None and not config.tolerances.set
        if config.quantized and no_setting:
            self.sqnr = contract.DEFAULT_QUANTIZED_SQNR_DB
        elif no_setting:
            self.reduced = reduced_precision(config)
            self.sqnr = contract.DEFAULT_REDUCED_PRECISION_SQNR_DB if self.reduced else None
        self.agree, self.rows = 0, 0

    @property
    def active(self):
        return self.sqnr is not None or self.top1 is not None

    def check(self, actual, expected):
        """(ok, report) of one output against the SQNR floor; counts its top-1 rows."""
        sqnr = sqnr_db(actual, expected)
        matches = top1_matches(actual, expected)
        report = f"SQNR {sqnr:.1f} dB"
        if matches:
            self.agree, self.rows = self.agree + matches[0], self.rows + matches[1]
            report += f", top-1 {matches[0]}/{matches[1]}"
        return self.sqnr is None or sqnr >= self.sqnr, report

    def summary(self):
        """(ok, line) for top-1 agreement over every case."""
        if not self.rows:
            return self.top1 is None, "top-1 agreement: no output with 2 or more axes"
        fraction = self.agree / self.rows
        ok = self.top1 is None or fraction >= self.top1
        floor = f" (floor {self.top1:g})" if self.top1 is not None else ""
        return ok, f"top-1 agreement over all cases: {self.agree}/{self.rows} = {fraction:.3f}{floor}"


class Checks:
    """How a numerics_test judges outputs: elementwise tolerances and/or accuracy floors."""

    def __init__(self, config):
        self.rtol, self.atol = tolerances(config)
        self.floors = Floors(config)
        self.differences = differences.Differences()
        # With accuracy floors, elementwise tolerances apply only when the test sets them.
        self.elementwise = not self.floors.active or config.tolerances.set
        self.output_names = None  # the model's names of the outputs (core/output_tree.py), when it has them

    def describe(self):
        checks = [f"rtol {self.rtol:g}, atol {self.atol:g}"] if self.elementwise else []
        checks += [f"SQNR >= {self.floors.sqnr:g} dB"] if self.floors.sqnr is not None else []
        checks += [f"{backend} computes in {precision} on this CPU, so SQNR, not rtol/atol: docs/backends.md"
                   for backend, precision in self.floors.reduced.items()]
        checks += [f"top-1 agreement >= {self.floors.top1:g}"] if self.floors.top1 is not None else []
        return ", ".join(checks)

    def case(self, name, actual, expected, lines, runtime="python", rejected=None, output_names=None):
        """Compares one call's outputs (None with `rejected`, the runtime's line refusing its
        inputs) with expected; appends to lines (marked [native] or [arm64] for a native
        runner's outputs). Outputs are named by output_names when given, else by index."""
        case = name
        name = name if runtime == "python" else f"{name} [{runtime}]"
        if rejected is not None:
            lines.append(f"  {name}: FAIL, the runtime rejected the inputs: {rejected}")
            return False
        self.differences.record(runtime, case, actual, expected)
        if len(actual) != len(expected):
            lines.append(f"  {name}: FAIL, {len(actual)} outputs from the runtime, {len(expected)} expected")
            return False
        ok = True
        for index, (a, want) in enumerate(zip(actual, expected)):
            good, report = compare(a, want, self.rtol, self.atol)
            good = good or not self.elementwise
            if self.floors.active:
                above, measured = self.floors.check(a, want)
                good, report = good and above, f"{report}, {measured}"
            ok &= good
            names = output_names or self.output_names
            output = names[index] if names and index < len(names) else index
            lines.append(f"  {name}: output {output} {report}  {'ok' if good else 'FAIL'}")
        return ok

    def native(self, config, calls, lines, runtime="native"):
        """Runs the calls (case_values.Calls) in the native runner (runtime "native") or its
        arm64 twin under qemu ("arm64"), in order, on one loaded program, and compares each
        with its expected outputs; appends to lines."""
        from exporter.checks import native
        from exporter.formats import value_file

        arm64 = runtime == "arm64"
        runner = config.arm64_runner if arm64 else config.native_runner
        if config.backend_packages and not arm64:  # a backend's runtime library, which the runner's backend loads
            backend_site.activate(config.backend_packages)
        try:
            outputs = native.run_calls(config, [(call.method, call.feed) for call in calls], runner, value_file)
        except native.NativeError as e:
            what = f"arm64 runtime ({config.native_runner_label} for aarch64, under qemu)" if arm64 else \
                f"native runtime ({config.native_runner_label})"
            if release_note(config):
                raise refused(config, what, str(e).removeprefix("et_runner: ")) from None
            lines.append(f"  {what}: FAIL, {e}")
            return False
        return self._cases(calls, outputs, lines, runtime)

    def reference(self, config, runtime, calls, lines):
        """Runs the calls in a backend's reference runtime (its record's runner module, whose
        run_calls raises its Unsupported in one line for what it cannot run) and compares each
        with its expected outputs; appends to lines."""
        runner = importlib.import_module(str(backends.REFERENCE_RUNTIMES[runtime].runner))
        try:
            outputs = runner.run_calls(config, calls)
        except runner.Unsupported as e:
            lines.append(f"  {runtime} runtime: FAIL, {e}")
            return False
        return self._cases(calls, outputs, lines, runtime)

    def fvp(self, config, calls, lines):
        """Runs the calls on Arm's Corstone FVP through the team's runner, which takes the native
        runner's command line (native.py), and compares each; appends to lines."""
        from exporter.checks import native
        from exporter.formats import value_file

        try:
            outputs = native.run_calls(config, [(call.method, call.feed) for call in calls], config.fvp_runner,
                                       value_file)
        except native.NativeError as e:
            lines.append(f"  fvp runtime ({config.fvp_runner_label}): FAIL, {e}")
            return False
        return self._cases(calls, outputs, lines, "fvp")

    def _cases(self, calls, outputs, lines, runtime):
        """Compares each call's outputs in `runtime` with its expected ones; appends to lines."""
        ok = True
        for call, got in zip(calls, outputs):
            ok &= self.case(call.name, got, call.expected, lines, runtime)
        return ok

    def runners(self, config, calls, lines, arm64_cases=None):
        """The calls in the native runner and in its arm64 twin, as config.runtimes asks (arm64
        only the cases named in arm64_cases, when given), then the two CPUs' outputs side by
        side; returns ok."""
        ok = True
        if "native" in config.runtimes:
            ok &= self.native(config, calls, lines)
        if "arm64" in config.runtimes:
            picked = [call for call in calls if arm64_cases is None or call.name in arm64_cases]
            start = time.perf_counter()
            ok &= self.native(config, picked, lines, "arm64")
            self.differences.arm64_seconds = time.perf_counter() - start  # what the arm64 run costs CI
        for runtime in config.runtimes:
            reference = backends.REFERENCE_RUNTIMES.get(runtime)
            if reference and reference.runner:
                ok &= self.reference(config, runtime, calls, lines)
            elif reference:  # reached through the team's runner, which takes the native runner's command line
                ok &= self.fvp(config, calls, lines)
        self.differences.compare_cpus(lines)
        return ok

    def python(self, values, lines):
        """Each call's inputs line and, when the Python runtime ran, its outputs compared."""
        ok = True
        for call in values.calls:
            lines.append(f"  {call.name}: inputs {shapes_text(call.feed) or '(no tensors)'}")
            if call.python is not None or call.python_error is not None:
                ok &= self.case(call.name, call.python, call.expected, lines, rejected=call.python_error)
        return ok

    def finish(self, ok, config, lines, explain=None):
        """The top-1 summary and, on failure, explain()'s lines and the closing advice; returns
        (ok, report text)."""
        if self.floors.active:
            good, line = self.floors.summary()
            ok &= good
            lines.append(f"  {line}  {'ok' if good else 'FAIL'}")
        if not ok and explain:
            lines += explain()
        self.differences.write(config)
        if not ok:
            lines.append(f"Past tolerance. If the difference is expected, set rtol/atol (or min_sqnr_db, "
                         f"min_top1_agreement) on {config.label}; otherwise the .pte does not compute "
                         f"what the model computes.")
        return ok, "\n".join(lines) + "\n"


def runtimes_text(runtimes):
    """The report's words for them: "python and native runtimes", "python, native and arm64
    runtimes", "native runtime"."""
    names = list(runtimes)
    text = names[-1] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return text + (" runtimes" if len(names) > 1 else " runtime")


def release_note(config):
    """releases.crossing_note of the test's program and runtimes."""
    return releases.crossing_note(config.program_release, config.release)


def refused(config, runtime, reason):
    """The test's one line when a runtime of one release cannot run a program of another:
    "ExecuTorch 1.4 (1.4.1)'s native runtime (...) cannot run program //p:x, lowered for ExecuTorch
    1.5 (1.5.1): <the runtime's reason>", not a flatbuffer error."""
    program, ran = releases.BY_NAME[config.program_release], releases.BY_NAME[config.release]
    return ValueError(f"ExecuTorch {ran.name} ({ran.version})'s {runtime} cannot run program {config.program}, "
                      f"lowered for ExecuTorch {program.name} ({program.version}): {reason}")


def load_values(config):
    """The CaseValues the test compares: its build action's files, or, for a config that names
    none, computed here (torch and ExecuTorch import then). Raises the ValueError it records."""
    if config.values:
        values = case_values.read(config.values, config.values_data)
    else:
        from exporter.actions import numerics_values

        values = numerics_values.compute(config)
    if values.error is not None:
        raise refused(config, "Python runtime", values.refused) if values.refused and release_note(config) \
            else ValueError(values.error + release_note(config))
    releases.check_ran(config.program, config.release, values.runtime)
    return values


def explain(config, checks, inputs):
    """The lines that name the first operators where the .pte departs (divergence.py), which
    builds the cases again with torch: paid only by a failing test. inputs: the method's."""
    from exporter.actions import numerics_values
    from exporter.checks import divergence

    prepared = numerics_values.prepare_cases(config, python=False, inputs=inputs)
    runs = [(name, args, kwargs, feed) for name, _, args, kwargs, feed in prepared.calls]
    return divergence.report(config, prepared.ep, prepared.reference, runs, checks.rtol, checks.atol)


def run(config):
    """Runs every case; returns (ok, report text)."""
    values = load_values(config)
    checks = Checks(config)
    checks.output_names = values.output_names
    reference = [backends.REFERENCE_RUNTIMES[r].title for r in config.runtimes if r in backends.REFERENCE_RUNTIMES]
    release = f" {config.release}" if config.release and (config.release != releases.DEFAULT or release_note(config)) else ""
    where = " and ".join(reference) if len(reference) == len(config.runtimes) else \
        f"ExecuTorch{release}'s {runtimes_text(config.runtimes)}"
    lines = [f"{config.label}: {config.program} in {where} vs {values.reference} ({checks.describe()})"]
    python_ok = checks.python(values, lines)
    arm64_cases = set(values.arm64_cases) if values.arm64_cases is not None else None
    ok = python_ok & checks.runners(config, values.calls, lines, arm64_cases)
    # Only the native run failed when the Python runtime agreed, and it said why.
    return checks.finish(ok, config, lines, None if python_ok else lambda: explain(config, checks, values.inputs))


def main(argv):
    """numerics_test's main (steps.main for a test with steps)."""
    return contract.main(argv, contract.NumericsConfig, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
