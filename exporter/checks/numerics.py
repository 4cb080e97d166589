"""The runner behind numerics_test: the .pte in the ExecuTorch runtime against the eager model
(run, on a contract.NumericsConfig; steps.py runs the tests with steps).

Inputs are seeded and cover every dynamic dim at its min, its tracing example and its max
(all dims together), plus the shapes the test lists. For each output it reports the worst
absolute error, and the worst relative error over elements whose expected magnitude exceeds
atol. A case fails when any element has |actual - expected| > atol + rtol * |expected|
(torch.allclose's rule), when shapes or dtypes differ, or when the runtime rejects the input.
"""

import json
import math
import sys
import time

import torch

from exporter.checks import contract, differences
from exporter.core import shape_spec
from exporter.core.case_inputs import full_sizes, make_inputs, runtime_inputs
from exporter.formats import pt2, pte_inspect

# float32 defaults: portable kernels follow ATen closely; XNNPACK reorders and fuses arithmetic.
DEFAULT_TOLERANCES = {"portable": (1e-4, 1e-5), "xnnpack": (1e-3, 1e-4)}  # (rtol, atol)


def default_tolerances(backends):
    """The loosest default among the program's backends (portable when it has none)."""
    rtol, atol = DEFAULT_TOLERANCES["portable"]
    for backend in backends:
        r, a = DEFAULT_TOLERANCES.get(backend, DEFAULT_TOLERANCES["xnnpack"])
        rtol, atol = max(rtol, r), max(atol, a)
    return rtol, atol


def tolerances(config):
    """(rtol, atol) of a test's config (its .tolerances, else its .backends' defaults)."""
    default_rtol, default_atol = default_tolerances(config.backends)
    rtol = config.tolerances.rtol if config.tolerances.rtol is not None else default_rtol
    atol = config.tolerances.atol if config.tolerances.atol is not None else default_atol
    return rtol, atol


def cases(spec, ranges, extra):
    """[(case name, {dim: size})]: all dims at min, at example, at max, then the listed ones."""
    dims = spec.get("dims", {})
    if not dims:
        return [("static shapes", {})]
    points = []
    for point in ("min", "example", "max"):
        sizes = {}
        for name, d in sorted(dims.items()):
            exported = ranges.get(name, {})
            value = d.get("example") if point == "example" else exported.get(point, d.get(point))
            sizes[name] = value if value is not None else d.get("example")
        points.append((f"{point} " + ", ".join(f"{k}={v}" for k, v in sizes.items()), sizes))
    for sizes in extra:
        full = full_sizes(spec, sizes)
        points.append(("listed " + ", ".join(f"{k}={v}" for k, v in sorted(full.items())), full))
    unique, seen = [], set()
    for name, sizes in points:
        key = tuple(sorted(sizes.items()))
        if key not in seen:
            seen.add(key)
            unique.append((name, sizes))
    return unique


def shapes_text(values):
    """'[4, 3], [8, 0]': the sizes of the tensors a case feeds, so derived sizes show."""
    return ", ".join(f"[{', '.join(map(str, v.shape))}]" for v in values if isinstance(v, torch.Tensor))


def compare(actual, expected, rtol, atol):
    """(ok, report) for one output tensor."""
    described = f"{str(expected.dtype).replace('torch.', '')}[{', '.join(map(str, expected.shape))}]"
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        got = f"{str(actual.dtype).replace('torch.', '')}[{', '.join(map(str, actual.shape))}]"
        return False, f"{described} expected, the runtime gave {got}"
    a, e = actual.double(), expected.double()
    both_nan = a.isnan() & e.isnan()  # NaN where the model gives NaN is a match
    nan_mismatch = bool((a.isnan() != e.isnan()).any())
    diff = torch.where(both_nan, torch.zeros_like(a), (a - e).abs())
    worst_abs = float(diff.max()) if diff.numel() else 0.0
    big = e.abs() > atol
    worst_rel = float((diff[big] / e.abs()[big]).max()) if bool(big.any()) else 0.0
    ok = not nan_mismatch and bool(((diff <= atol + rtol * e.abs()) | both_nan).all())
    report = f"{described}: worst abs error {worst_abs:.3g}, worst rel error {worst_rel:.3g}"
    if nan_mismatch:
        report += ", NaN where the reference has none (or the reverse)"
    return ok, report


def sqnr_db(actual, expected):
    """Signal-to-quantization-noise ratio in dB: 10 log10(sum e^2 / sum (a - e)^2)."""
    e, noise = expected.double(), (actual.double() - expected.double())
    signal, error = float((e * e).sum()), float((noise * noise).sum())
    if error == 0:
        return float("inf")
    return 10 * math.log10(signal / error) if signal > 0 else float("-inf")


def top1_matches(actual, expected):
    """(rows whose argmax over the last axis agrees, rows), or None for fewer than 2 axes."""
    if expected.dim() < 2 or actual.shape != expected.shape:
        return None
    a, e = actual.reshape(-1, actual.shape[-1]), expected.reshape(-1, expected.shape[-1])
    return int((a.argmax(-1) == e.argmax(-1)).sum()), e.shape[0]


class Floors:
    """The accuracy floors of a numerics_test: SQNR per output and case, top-1 over all cases."""

    def __init__(self, config):
        self.sqnr = config.min_sqnr_db
        self.top1 = config.min_top1_agreement
        no_setting = self.sqnr is None and self.top1 is None and not config.tolerances.set
        if config.quantized and no_setting:
            self.sqnr = contract.DEFAULT_QUANTIZED_SQNR_DB
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


def check_not_calibration(config, feeds):
    """A quantized program is judged on inputs it was not calibrated on; raises if one was."""
    from exporter.actions import calibrate

    batches = calibrate.load(config.calibration.batches)
    seen = [t for b in batches for t in torch.utils._pytree.tree_leaves(b) if isinstance(t, torch.Tensor)]
    for name, feed in feeds:
        for t in feed:
            if isinstance(t, torch.Tensor) and any(c.shape == t.shape and torch.equal(c, t) for c in seen):
                raise ValueError(
                    f"case {name!r} feeds an input that is also a batch of calibration_data "
                    f"{config.calibration.label}; calibrate on other data"
                )


def load_methods(config, names):
    """{name: (execute(inputs) -> outputs, number of inputs)} of the program's methods, loaded
    from one program as an app loads it, every one before the first call (a method's load
    writes the initial value of the buffers it keeps, which its methods share). A program with
    external weights loads its .ptd beside it."""
    from executorch.runtime import Runtime

    if config.ptd:  # the runtime follows a .ptd's offsets unchecked; a corrupt one fails in one line
        pte_inspect.summarize_ptd(config.ptd)
    program = Runtime.get().load_program(config.pte, data_path=config.ptd)
    methods = {name: program.load_method(name) for name in names}
    return {name: (method.execute, method.metadata.num_inputs()) for name, method in methods.items()}


def load_method(config):
    """(execute, number of inputs) of the method the test runs (see load_methods)."""
    return load_methods(config, [config.method])[config.method]


def reference_module(config, ep):
    """(what computes the expected outputs, its description) for the test's reference."""
    from exporter.core.model_loader import load_model

    if config.reference == "exported":
        return ep.module(), f"the exported program {config.exported_label}"
    if config.reference == "program":
        other = config.reference_program
        return pt2.load(other["pt2"]).module(), f"the program {other['label']}"
    return load_model(config.model), f"the eager model {config.model.label}"


class Checks:
    """How a numerics_test judges outputs: elementwise tolerances and/or accuracy floors."""

    def __init__(self, config):
        self.rtol, self.atol = tolerances(config)
        self.floors = Floors(config)
        self.differences = differences.Differences()
        # With accuracy floors, elementwise tolerances apply only when the test sets them.
        self.elementwise = not self.floors.active or config.tolerances.set

    def describe(self):
        checks = [f"rtol {self.rtol:g}, atol {self.atol:g}"] if self.elementwise else []
        checks += [f"SQNR >= {self.floors.sqnr:g} dB"] if self.floors.sqnr is not None else []
        checks += [f"top-1 agreement >= {self.floors.top1:g}"] if self.floors.top1 is not None else []
        return ", ".join(checks)

    def case(self, name, execute, feed, expected, lines, runtime="python"):
        """Runs one call in the runtime and compares it with expected; appends to lines (marked
        [native] or [arm64] for a native runner's outputs)."""
        expected = [t for t in torch.utils._pytree.tree_leaves(expected) if isinstance(t, torch.Tensor)]
        case = name
        name = name if runtime == "python" else f"{name} [{runtime}]"
        try:
            actual = list(execute(feed))
        except Exception as e:  # The runtime raises RuntimeError with its error code.
            lines.append(f"  {name}: FAIL, the runtime rejected the inputs: {str(e).splitlines()[0]}")
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
            lines.append(f"  {name}: output {index} {report}  {'ok' if good else 'FAIL'}")
        return ok

    def native(self, config, calls, lines, runtime="native"):
        """Runs [(case name, method, inputs, expected)] in the native runner (runtime "native")
        or its arm64 twin under qemu ("arm64"), in order, on one loaded program, and compares
        each with its expected outputs; appends to lines."""
        from exporter.checks import native

        arm64 = runtime == "arm64"
        runner = config.arm64_runner if arm64 else config.native_runner
        try:
            outputs = native.run_calls(config, [(method, feed) for _, method, feed, _ in calls], runner)
        except native.NativeError as e:
            what = f"arm64 runtime ({config.native_runner_label} for aarch64, under qemu)" if arm64 else \
                f"native runtime ({config.native_runner_label})"
            lines.append(f"  {what}: FAIL, {e}")
            return False
        ok = True
        for (name, _, feed, expected), got in zip(calls, outputs):
            ok &= self.case(name, lambda _, got=got: got, feed, expected, lines, runtime)
        return ok

    def runners(self, config, calls, lines, arm64_cases=None):
        """The calls in the native runner and in its arm64 twin, as config.runtimes asks (arm64
        only the cases named in arm64_cases, when given), then the two CPUs' outputs side by
        side; returns ok."""
        ok = True
        if "native" in config.runtimes:
            ok &= self.native(config, calls, lines)
        if "arm64" in config.runtimes:
            picked = [call for call in calls if arm64_cases is None or call[0] in arm64_cases]
            start = time.perf_counter()
            ok &= self.native(config, picked, lines, "arm64")
            self.differences.arm64_seconds = time.perf_counter() - start  # what the arm64 run costs CI
        self.differences.compare_cpus(lines)
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


def arm64_case_names(config, every_case):
    """The names of the cases the arm64 runner takes: those at config.arm64_inputs' sizes, or
    None (all of them) when the test lists none. Emulation makes large cases slow."""
    if not config.arm64_inputs:
        return None
    wanted = {tuple(sorted(full_sizes(config.spec, sizes).items())) for sizes in config.arm64_inputs}
    return {name for name, sizes in every_case if tuple(sorted(sizes.items())) in wanted}


def run(config):
    """Runs every case; returns (ok, report text)."""
    ep = pt2.load(config.pt2)
    with open(config.pt2_manifest, encoding="utf-8") as f:
        ranges = json.load(f).get("range_constraints", {})
    reference, reference_name = reference_module(config, ep)
    python = "python" in config.runtimes
    if python:
        execute, n_inputs = load_method(config)
    else:  # a program only the native runner can run (an app's own kernels)
        execute, n_inputs = None, len(ep.graph_signature.user_inputs)
    checks = Checks(config)
    lines = [f"{config.label}: {config.program} in ExecuTorch's {runtimes_text(config.runtimes)} "
             f"vs {reference_name} ({checks.describe()})"]
    ok = True
    runs = []
    module = ep.module()  # its signature names the arguments; built once, not per case
    every_case = cases(config.spec, ranges, list(config.inputs) + list(config.arm64_inputs))
    for name, sizes in every_case:
        args, kwargs = shape_spec.call_arguments(ep, make_inputs(config.spec, sizes), module)
        runs.append((name, args, kwargs, runtime_inputs(args, kwargs, n_inputs)))
    if config.calibration:
        check_not_calibration(config, [(name, feed) for name, _, _, feed in runs])
    native_calls = []
    for name, args, kwargs, feed in runs:
        lines.append(f"  {name}: inputs {shapes_text(feed) or '(no tensors)'}")
        with torch.no_grad():
            expected = reference(*args, **kwargs)
        if python:
            ok &= checks.case(name, execute, feed, expected, lines)
        native_calls.append((name, config.method, feed, expected))
    python_ok = ok
    ok &= checks.runners(config, native_calls, lines, arm64_case_names(config, every_case))

    def explain():  # name the first operators where the .pte departs (divergence.py)
        if python_ok:  # the Python runtime agreed: only the native run failed, and said why
            return []
        from exporter.checks import divergence

        return divergence.report(config, ep, reference, runs, checks.rtol, checks.atol)

    return checks.finish(ok, config, lines, explain)


def main(argv):
    """numerics_test's main (steps.main for a test with steps)."""
    return contract.main(argv, contract.NumericsConfig, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
