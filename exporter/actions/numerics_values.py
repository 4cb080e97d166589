"""The NumericsValues action: what a numerics_test compares, computed at build time in the warm
worker, so that the test itself imports neither torch nor ExecuTorch (checks/numerics.py).

For every call of the test (each case: every dynamic dim at its min, example and max, then the
listed sizes; or each step of a stateful test), in order: the inputs, built as the exporter
builds its example inputs, seeded; the reference's outputs (the eager model, the .pt2's module()
or another export's); and the outputs of ExecuTorch's Python runtime on one loaded program, or
the line it rejected the inputs with. They go to <test>.values.json and <test>.values.etvals
(formats/case_values.py). A ValueError (an input the check cannot build, a case that feeds a
calibration batch, a corrupt .ptd) is recorded too: the test fails with it in one line.

Float outputs come from the CPU's kernels, so the files may differ between CPU models (for
example XNNPACK picks its kernels by instruction set); the math settings of every exporter
action (core/determinism.py) keep them equal from run to run on one machine.
"""

import functools
import importlib.metadata
import inspect
import json

import torch

from exporter.core import backend_site, output_tree, phases, runtime_errors, runtime_kernels, runtime_process, shape_spec
from exporter.core.case_inputs import cases, full_sizes, make_inputs, runtime_inputs
from exporter.formats import case_values, pt2, pte_inspect, value_file

# The runtime processes of the request being computed (core/runtime_process.py), ended after it.
_CHILDREN: list[runtime_process.ChildRuntime] = []


def to_values(outputs):
    """Tensors and scalars as a value file holds them (formats/value_file.py)."""
    found = []
    for value in outputs:
        if isinstance(value, torch.Tensor):
            name = str(value.dtype).replace("torch.", "")
            if name not in value_file.DTYPE_NAMES:
                raise ValueError(f"an output or input is a {name} tensor; numerics_test compares "
                                 f"{', '.join(value_file.DTYPE_NAMES)}")
            array = value.detach().float() if name == "bfloat16" else value.detach()
            value = value_file.Tensor(name, array.contiguous().numpy().copy())
        found.append(value)
    return found


def tensor_leaves(outputs):
    """The tensors of a reference's (nested) outputs, in order."""
    return [t for t in torch.utils._pytree.tree_leaves(outputs) if isinstance(t, torch.Tensor)]


def load_methods(config, names):
    """{name: (execute(inputs) -> outputs, number of inputs)} of the program's methods, loaded
    from one program as an app loads it, every one before the first call (a method's load
    writes the initial value of the buffers it keeps, which its methods share). A program with
    external weights loads its .ptd beside it. A release whose runtime needs another torch runs
    it in its own venv's interpreter (core/runtime_process.py)."""
    if not config.runtime_python:
        runtime_kernels.register(pte_inspect.operator_names(config.pte))
    if config.ptd:  # the runtime follows a .ptd's offsets unchecked; a corrupt one fails in one line
        pte_inspect.summarize_ptd(config.ptd)
    with _in_runtime(config, names):
        try:
            loaded = _load(config, names)
        except RuntimeError as e:  # the runtime refused the program: the test fails in one line
            version, why = importlib.metadata.version("executorch"), _refusal(config, names, e)
            raise runtime_errors.Refused(f"ExecuTorch {version}'s Python runtime cannot load {config.pte}: {why}",
                                         why, version) from None
    return {name: (_executing(config, name, execute), inputs) for name, (execute, inputs) in loaded.items()}


def _refusal(config, names, error):
    """Why the runtime refused the program, in words (core/runtime_errors.py): the operators of
    the methods it loads that it does not register, by name."""
    from executorch.extension.pybindings import portable_lib

    methods = pte_inspect.summarize(config.pte)["methods"]
    needed = [op for name in names if name in methods for op in methods[name]["operators"]]
    return runtime_errors.reason(str(error), needed, portable_lib._get_operator_names())


def _load(config, names):
    """{name: (execute, number of inputs)} from ExecuTorch's Python runtime. Its releases before 1.5
    load a .ptd only through the binding's module (Runtime.load_program has no data_path), whose
    methods share their memory as a program's do."""
    if config.runtime_python:
        child = runtime_process.ChildRuntime(config.runtime_python)
        _CHILDREN.append(child)
        inputs = child.load(config.pte, config.ptd, names)
        return {name: (functools.partial(child.call, name), inputs[name]) for name in names}
    from executorch.runtime import Runtime

    runtime = Runtime.get()
    if config.ptd and "data_path" not in inspect.signature(runtime.load_program).parameters:
        from executorch.extension.pybindings import portable_lib

        module = portable_lib._load_for_executorch(config.pte, data_path=config.ptd)
        return {name: (functools.partial(module.run_method, name), module.method_meta(name).num_inputs())
                for name in names}
    program = runtime.load_program(config.pte, **({"data_path": config.ptd} if config.ptd else {}))
    methods = {name: program.load_method(name) for name in names}
    return {name: (method.execute, method.metadata.num_inputs()) for name, method in methods.items()}


def _in_runtime(config, names):
    """The runtime's phase (core/phases.py): a crash there is ExecuTorch's, not the model's."""
    return phases.running(phases.RUNTIME, program=config.pte, data=config.ptd or "", methods=list(names))


def _executing(config, name, execute):
    def run(inputs):
        with _in_runtime(config, [name]):
            return execute(inputs)

    return run


def reference_module(config, ep):
    """(what computes the expected outputs, its description) for the test's reference."""
    from exporter.core.model_loader import load_model

    if config.reference == "exported":
        return ep.module(), f"the exported program {config.exported_label}"
    if config.reference == "program":
        other = config.reference_program
        return pt2.load(other["pt2"]).module(), f"the program {other['label']}"
    return load_model(config.model), f"the eager model {config.model.label}"


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


def arm64_case_names(config, every_case):
    """The names of the cases the arm64 runner takes: those at config.arm64_inputs' sizes, or
    None (all of them) when the test lists none. Emulation makes large cases slow."""
    if not config.arm64_inputs:
        return None
    wanted = {tuple(sorted(full_sizes(config.spec, sizes).items())) for sizes in config.arm64_inputs}
    return [name for name, sizes in every_case if tuple(sorted(sizes.items())) in wanted]


class Prepared:
    """A test's calls, ready to run: the reference, the program's methods (None without the
    Python runtime) and [(call name, method, args, kwargs, feed)], plus what the report needs."""

    def __init__(self, reference, reference_name, methods, calls, inputs, arm64_cases=None, ep=None):
        self.reference, self.reference_name = reference, reference_name
        self.methods, self.calls, self.inputs = methods, calls, inputs
        self.arm64_cases, self.ep = arm64_cases, ep


def prepare_cases(config, python=True, inputs=None):
    """Prepared for a test without steps: the cases at the dims' min, example and max, then the
    listed ones (those of the arm64 run too); python=False loads no program, and the feeds
    then take `inputs` values (the method's count, recorded when it was loaded) if given."""
    ep = pt2.load(config.pt2)
    with open(config.pt2_manifest, encoding="utf-8") as f:
        ranges = json.load(f).get("range_constraints", {})
    reference, reference_name = reference_module(config, ep)
    methods = load_methods(config, [config.method]) if python else None
    # A program only the native runner can run (an app's own kernels) takes its user inputs.
    inputs = methods[config.method][1] if methods else inputs or len(ep.graph_signature.user_inputs)
    module = ep.module()  # its signature names the arguments; built once, not per case
    every_case = cases(config.spec, ranges, list(config.inputs) + list(config.arm64_inputs))
    calls = []
    for name, sizes in every_case:
        args, kwargs = shape_spec.call_arguments(ep, make_inputs(config.spec, sizes), module)
        calls.append((name, config.method, args, kwargs, runtime_inputs(args, kwargs, inputs)))
    if config.calibration:
        check_not_calibration(config, [(name, feed) for name, _, _, _, feed in calls])
    return Prepared(reference, reference_name, methods, calls, inputs, arm64_case_names(config, every_case), ep)


def step_values(spec, step, seed):
    """{input name: value} for one step: seeded inputs at the step's dim sizes, with the step's
    `values` in place (a tensor input becomes a tensor of its shape filled with the value)."""
    values = make_inputs(spec, step.get("dims", {}), seed=seed)
    for name, value in step.get("values", {}).items():
        current = values[name]
        values[name] = torch.full_like(current, value) if isinstance(current, torch.Tensor) else value
    return values


def step_name(index, step):
    settings = dict(step.get("dims", {}), **step.get("values", {}))
    return f"step {index} {step['method']}({', '.join(f'{k}={v}' for k, v in sorted(settings.items()))})"


def prepare_steps(config):
    """Prepared for a test with steps: one call per step, in order, on the methods it names."""
    programs = config.method_programs
    used = sorted({step["method"] for step in config.steps})
    eps = {name: pt2.load(programs[name].pt2) for name in used}
    modules = {name: ep.module() for name, ep in eps.items()}  # signatures, for call_arguments
    reference, reference_name = reference_module(config, eps[used[0]])
    methods = load_methods(config, used)
    calls = []
    for index, step in enumerate(config.steps):
        method = step["method"]
        args, kwargs = shape_spec.call_arguments(eps[method], step_values(programs[method].spec, step, index),
                                                 modules[method])
        calls.append((step_name(index, step), method, args, kwargs, runtime_inputs(args, kwargs, methods[method][1])))
    if config.calibration:
        check_not_calibration(config, [(name, feed) for name, _, _, _, feed in calls])
    return Prepared(reference, reference_name, methods, calls, methods[used[0]][1])


def _call(prepared, name, method, args, kwargs, feed):
    """One call's Call: the reference's outputs, then the Python runtime's (when it runs)."""
    with torch.no_grad(), phases.running(phases.MODEL, code=prepared.reference_name):
        expected = to_values(tensor_leaves(prepared.reference(*args, **kwargs)))
    outputs, error = None, None
    if prepared.methods is not None:
        try:
            outputs = list(prepared.methods[method][0](feed))
        except Exception as e:  # The runtime raises RuntimeError with its error code.
            error = (str(e).splitlines() or [""])[0]
    python = to_values(outputs) if outputs is not None else None
    # The native runners take the inputs as the Python runtime left them.
    return case_values.Call(name, method, to_values(feed), expected, python, error)


def compute(config):
    """The CaseValues of a test's config (an action's NumericsValuesConfig, or a test's
    NumericsConfig, whose fields these are); a ValueError becomes its `error`."""
    try:
        if config.steps:
            prepared = prepare_steps(config)
        else:
            prepared = prepare_cases(config, "python" in config.runtimes)
        calls = [_call(prepared, *call) for call in prepared.calls]
    except runtime_errors.Refused as e:
        return case_values.CaseValues(error=str(e), runtime=e.version, refused=e.reason)
    except ValueError as e:
        return case_values.CaseValues(error=str(e))
    finally:
        while _CHILDREN:
            _CHILDREN.pop().close()
    names = output_tree.program_names(prepared.ep) if prepared.ep is not None else None
    runtime = importlib.metadata.version("executorch") if "python" in config.runtimes else None
    return case_values.CaseValues(prepared.reference_name, calls, prepared.inputs, prepared.arm64_cases,
                                  output_names=names, runtime=runtime)


def warm_up():
    """A persistent worker's warm-up: ExecuTorch's Python runtime, which the export worker does
    not import otherwise."""
    from executorch.runtime import Runtime

    Runtime.get()


def run(config):
    """Runs the action for a NumericsValuesConfig (outputs "values", "data")."""
    backend_site.activate(config.backend_packages)
    case_values.write(compute(config), config.outputs["values"], config.outputs["data"])
