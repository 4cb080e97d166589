"""numerics_test(steps = [...]): a sequence of calls on one loaded program against one eager
model, for programs that keep state in mutable buffers (a KV cache).

Both sides carry their own state from call to call: the runtime in the program's buffers
(shared by its methods), the eager module in its own. The test feeds only each step's inputs,
never the state, so a program that loses or misplaces its state fails at the first step that
reads it. Every method a step names is loaded before the first call, as an app does.
"""

import sys

import torch

from exporter.checks import contract, numerics
from exporter.core import shape_spec
from exporter.core.case_inputs import make_inputs, runtime_inputs
from exporter.formats import pt2


def step_values(spec, step, seed):
    """{input name: value} for one step: seeded inputs at the step's dim sizes, with the step's
    `values` in place (a tensor input becomes a tensor of its shape filled with the value)."""
    values = make_inputs(spec, step.get("dims", {}), seed=seed)
    for name, value in step.get("values", {}).items():
        current = values[name]
        values[name] = torch.full_like(current, value) if isinstance(current, torch.Tensor) else value
    return values


def _step_name(index, step):
    settings = dict(step.get("dims", {}), **step.get("values", {}))
    return f"step {index} {step['method']}({', '.join(f'{k}={v}' for k, v in sorted(settings.items()))})"


def run(config):
    """Runs the steps in order; returns (ok, report text)."""
    programs = config.method_programs
    used = sorted({step["method"] for step in config.steps})
    eps = {name: pt2.load(programs[name].pt2) for name in used}
    modules = {name: ep.module() for name, ep in eps.items()}  # signatures, for call_arguments
    reference, reference_name = numerics.reference_module(config, eps[used[0]])
    methods = numerics.load_methods(config, used)
    checks = numerics.Checks(config)
    lines = [f"{config.label}: {config.program}, {len(config.steps)} calls in order on one "
             f"loaded program, vs the same calls on {reference_name} ({checks.describe()})"]
    calls = []
    for index, step in enumerate(config.steps):
        ep = eps[step["method"]]
        args, kwargs = shape_spec.call_arguments(ep, step_values(programs[step["method"]].spec, step, index),
                                               modules[step["method"]])
        feed = runtime_inputs(args, kwargs, methods[step["method"]][1])
        calls.append((_step_name(index, step), step["method"], args, kwargs, feed))
    if config.calibration:
        numerics.check_not_calibration(config, [(name, feed) for name, _, _, _, feed in calls])
    ok = True
    native_calls = []
    for name, method, args, kwargs, feed in calls:
        lines.append(f"  {name}: inputs {numerics.shapes_text(feed) or '(no tensors)'}")
        with torch.no_grad():
            expected = reference(*args, **kwargs)
        ok &= checks.case(name, methods[method][0], feed, expected, lines)
        native_calls.append((name, method, feed, expected))
    # The same calls in order on one natively loaded program (and on arm64, under qemu).
    ok &= checks.runners(config, native_calls, lines)
    return checks.finish(ok, config, lines)


def main(argv):
    """numerics_test's main for a test with steps."""
    return contract.main(argv, contract.NumericsConfig, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
