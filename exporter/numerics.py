"""The runner behind numerics_test: the .pte in the ExecuTorch runtime against the eager model.

    numerics.py CONFIG.json

Inputs are seeded and cover every dynamic dim at its min, its tracing example and its max
(all dims together), plus the shapes the test lists. For each output it reports the worst
absolute error, and the worst relative error over elements whose expected magnitude exceeds
atol. A case fails when any element has |actual - expected| > atol + rtol * |expected|
(torch.allclose's rule), when shapes or dtypes differ, or when the runtime rejects the input.
"""

import copy
import inspect
import json
import os
import sys

import torch

from exporter import pt2, spec as spec_lib

# float32 defaults: portable kernels follow ATen closely; XNNPACK reorders and fuses arithmetic.
DEFAULT_TOLERANCES = {"portable": (1e-4, 1e-5), "xnnpack": (1e-3, 1e-4)}  # (rtol, atol)


def default_tolerances(backends):
    """The loosest default among the program's backends (portable when it has none)."""
    rtol, atol = DEFAULT_TOLERANCES["portable"]
    for backend in backends:
        r, a = DEFAULT_TOLERANCES.get(backend, DEFAULT_TOLERANCES["xnnpack"])
        rtol, atol = max(rtol, r), max(atol, a)
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
        full = {name: d.get("example") for name, d in sorted(dims.items())}
        full.update(sizes)
        points.append(("listed " + ", ".join(f"{k}={v}" for k, v in sorted(full.items())), full))
    unique, seen = [], set()
    for name, sizes in points:
        key = tuple(sorted(sizes.items()))
        if key not in seen:
            seen.add(key)
            unique.append((name, sizes))
    return unique


def make_inputs(spec, sizes, seed=0):
    """{input name: value} for one case: the spec's inputs with every named dim at `sizes`.

    Values are built the way the exporter builds its example inputs (nested containers and
    non-tensor inputs included), seeded, with the case's sizes in place of the examples.
    """
    case = copy.deepcopy(spec)
    for name, size in sizes.items():
        case["dims"][name]["example"] = size
    for _, tensor in spec_lib.walk_tensors(case):
        tensor.pop("example_shape", None)  # recomputed from the dims' new examples
    generator = torch.Generator().manual_seed(seed)
    return {e["name"]: spec_lib.build_value(e["value"], case, generator, e["name"], {})
            for e in case["inputs"]}


def call_arguments(ep, values):
    """(args, kwargs) for the program's signature: as many positionals as it was exported with."""
    params = list(inspect.signature(ep.module().forward).parameters)
    in_spec = ep.call_spec.in_spec  # ((args...), {kwargs...})
    n_args, keywords = in_spec.child(0).num_children, list(in_spec.child(1).context or [])
    missing = [n for n in params[:n_args] + keywords if n not in values]
    if missing:
        raise ValueError(f"the program takes input {missing[0]!r}, which the shape_spec does not name")
    return tuple(values[n] for n in params[:n_args]), {k: values[k] for k in keywords}


def runtime_inputs(args, kwargs, n_inputs):
    """The flat list the runtime's Method.execute takes, in the program's input order.

    The program keeps an input slot for every leaf, None included; a str is baked into the
    program and its slot takes None (the Python runtime accepts no str). Older programs that
    dropped non-tensor inputs take the tensors alone.
    """
    flat = torch.utils._pytree.tree_leaves((args, kwargs), is_leaf=lambda v: v is None)
    if len(flat) != n_inputs:
        flat = [v for v in flat if isinstance(v, torch.Tensor)]
    return [v.clone() if isinstance(v, torch.Tensor) else None if isinstance(v, str) else v for v in flat]


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


def _reference(config, ep):
    from exporter.configs import ModelConfig
    from exporter.model_loader import load_model

    if config["reference"] == "exported":
        return ep.module(), f"the exported program {config['exported_label']}"
    model = load_model(ModelConfig.from_json(config["model"]))
    return model, f"the eager model {config['model']['label']}"


def run(config):
    """Runs every case; returns (ok, report text)."""
    from executorch.runtime import Runtime

    ep = pt2.load(config["pt2"])
    with open(config["pt2_manifest"], encoding="utf-8") as f:
        ranges = json.load(f).get("range_constraints", {})
    reference, reference_name = _reference(config, ep)
    method = Runtime.get().load_program(config["pte"]).load_method(config["method"])
    default_rtol, default_atol = default_tolerances(config.get("backends", []))
    rtol = config["rtol"] if config.get("rtol") is not None else default_rtol
    atol = config["atol"] if config.get("atol") is not None else default_atol
    n_inputs = method.metadata.num_inputs()
    lines = [f"{config['label']}: {config['program']} in the ExecuTorch runtime vs {reference_name} "
             f"(rtol {rtol:g}, atol {atol:g})"]
    ok = True
    for name, sizes in cases(config["spec"], ranges, config.get("inputs", [])):
        args, kwargs = call_arguments(ep, make_inputs(config["spec"], sizes))
        feed = runtime_inputs(args, kwargs, n_inputs)
        lines.append(f"  {name}: inputs {shapes_text(feed) or '(no tensors)'}")
        with torch.no_grad():
            expected = reference(*args, **kwargs)
        expected = [t for t in torch.utils._pytree.tree_leaves(expected) if isinstance(t, torch.Tensor)]
        try:
            actual = list(method.execute(feed))
        except Exception as e:  # The runtime raises RuntimeError with its error code.
            ok = False
            lines.append(f"  {name}: FAIL, the runtime rejected the inputs: {str(e).splitlines()[0]}")
            continue
        if len(actual) != len(expected):
            ok = False
            lines.append(f"  {name}: FAIL, {len(actual)} outputs from the runtime, {len(expected)} expected")
            continue
        for index, (a, e) in enumerate(zip(actual, expected)):
            good, report = compare(a, e, rtol, atol)
            ok &= good
            lines.append(f"  {name}: output {index} {report}  {'ok' if good else 'FAIL'}")
    if not ok:
        lines.append(f"Past tolerance. If the difference is expected, set rtol/atol on {config['label']}; "
                     f"otherwise the .pte does not compute what the model computes.")
    return ok, "\n".join(lines) + "\n"


def main(argv):
    with open(argv[0], encoding="utf-8") as f:
        config = json.load(f)
    if config["model"]:  # runfiles-relative roots, from the test's working directory
        config["model"]["import_roots"] = [os.path.abspath(r) for r in config["model"]["import_roots"]]
    try:
        ok, report = run(config)
    except ValueError as e:  # an input this runner cannot build; say which, without a traceback
        ok, report = False, f"{config['label']}: {e}\n"
    (sys.stdout if ok else sys.stderr).write(report)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
