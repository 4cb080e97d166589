"""Where a failing numerics_test's .pte first departs from its reference, operator by operator.

ExecuTorch's Inspector joins a runtime ETDump with the program's ETRecord. The 1.4.1 runtime
wrote no events; 1.5.1's records intermediate outputs (enable_etdump with a debug buffer, then
Inspector.calculate_numeric_gap), but for a delegated program only each delegate call's output:
an XNNPACK conv net gave two rows, one per DELEGATE_CALL, each covering several operators
(docs/deployment.md, "Debug records"). So this module keeps the numerical debugger that reaches
inside delegates, devtools.intermediate_output_tap: it makes every operator's output an extra
output of the program (through delegates too), lowers that program for the same backends, runs
it in the same runtime and compares each operator's value with

- the exported program's value for that operator (ExecuTorch's AOT reference): a difference
  there is the kernel's or the delegate's;
- the eager model's output of the module the operator ends (forward hooks), when the reference
  is the eager model: a difference there that the exported program shares comes from the export
  (a decomposition, say).

The report names the first operators, in execution order, that differ past the test's
tolerance. It costs one extra lowering, and only when a test fails.
"""

import copy
import math

import torch

from exporter.checks import contract


def _tapped_program(ep, backends):
    """(ExecuTorch program with every operator's output tapped, tap specs, tapped ExportedProgram)."""
    from executorch.devtools.intermediate_output_tap import (
        FULL_TENSOR,
        select_all_call_function,
        strip_taps_,
        tap_intermediate_outputs_,
    )
    from executorch.exir import to_edge_transform_and_lower

    from exporter.actions import delegates, lower

    if not backends:  # a quantized program's quantize/dequantize need these out variants
        import executorch.kernels.quantized  # noqa: F401

    tapped, specs = tap_intermediate_outputs_(copy.deepcopy(ep), rules=[(select_all_call_function(), FULL_TENSOR)])
    with lower.lowering_context():
        edge = to_edge_transform_and_lower(tapped, partitioner=delegates.partitioners(backends))
        strip_taps_(edge)
        return edge.to_executorch(), specs, tapped


def _run(et_program, feed):
    from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer

    module = _load_for_executorch_from_buffer(et_program.buffer)
    return list(module.run_method("forward", feed))


def _eager_module_outputs(model, args, kwargs):
    """{module path: output} of every submodule called once, from forward hooks."""
    if not isinstance(model, torch.nn.Module) or isinstance(model, torch.fx.GraphModule):
        return {}
    outputs, calls, hooks = {}, {}, []
    for path, module in model.named_modules():
        if not path:
            continue

        def hook(_module, _inputs, output, path=path):
            calls[path] = calls.get(path, 0) + 1
            outputs[path] = output

        hooks.append(module.register_forward_hook(hook))
    try:
        with torch.no_grad():
            model(*args, **kwargs)
    finally:
        for h in hooks:
            h.remove()
    return {p: o for p, o in outputs.items() if calls[p] == 1 and isinstance(o, torch.Tensor)}


def _error(actual, expected, rtol, atol, min_sqnr_db=None):
    """(diverges, worst abs error) of two values; non-tensors and shape changes are skipped.
    With min_sqnr_db (quantized programs), a value diverges when its SQNR falls below it."""
    if not isinstance(actual, torch.Tensor) or not isinstance(expected, torch.Tensor):
        return False, 0.0
    if actual.shape != expected.shape or not expected.is_floating_point():
        return False, 0.0
    a, e = actual.double(), expected.double()
    diff = (a - e).abs().nan_to_num(nan=float("inf"))
    worst = float(diff.max()) if diff.numel() else 0.0
    if min_sqnr_db is not None:
        noise, signal = float((diff * diff).sum()), float((e * e).sum())
        # A NaN or infinite value (noise inf) departs at any floor; log10 would reject signal / inf.
        departs = noise > 0 and signal > 0 and (math.isinf(noise) or 10 * math.log10(signal / noise) < min_sqnr_db)
        return departs, worst
    return bool((diff > atol + rtol * e.abs()).any()), worst


def _where(spec):
    module = f" in {spec.module_path} ({spec.module_class})" if spec.module_path else ""
    return f"{spec.op_target} (node {spec.node_name}){module}"


def compare_case(specs, runtime, aot, eager, rtol, atol, min_sqnr_db=None):
    """(kernel findings, export findings) for one case's tapped values, in execution order: each
    [text] of the first diverging operator, then a line counting the ones after it."""
    ops_of: dict = {}
    last_of_module: dict = {}
    for spec in specs:
        if spec.module_path:
            ops_of.setdefault(spec.module_path, []).append(spec.op_target)
            last_of_module[spec.module_path] = spec
    kernel, export = [], []
    for spec in specs:
        value = runtime[spec.output_index]
        bad, worst = _error(value, aot[spec.output_index], rtol, atol, min_sqnr_db)
        if bad:
            kernel.append(f"{_where(spec)}: worst abs error {worst:.3g} against the exported program")
        if spec.module_path in eager and last_of_module[spec.module_path] is spec:
            off, error = _error(value, eager[spec.module_path], rtol, atol, min_sqnr_db)
            shared, _ = _error(aot[spec.output_index], eager[spec.module_path], rtol, atol, min_sqnr_db)
            if off and shared:
                ops = ", ".join(dict.fromkeys(ops_of[spec.module_path]))
                export.append(f"module {spec.module_path} ({spec.module_class}), whose operators are {ops}: "
                              f"its output ({spec.op_target}, node {spec.node_name}) differs from the "
                              f"eager module's by up to {error:.3g}, in the exported program too")
    return [_first(kernel, "operators"), _first(export, "modules")]


def _first(findings, what):
    if len(findings) > 1:
        return findings[:1] + [f"{len(findings) - 1} later {what} differ too, downstream of it"]
    return findings


def _quantizes_weights_at_run_time(ep):
    """Whether ep quantizes weights in its graph (a quantizer whose record keeps weights unfolded): the
    portable kernel asserts on their float32 scales and aborts the whole process."""
    return any(n.op == "call_function" and "quantize_per_channel" in str(n.target)
               and "dequantize" not in str(n.target) for n in ep.graph.nodes)


def report(config, ep, reference, runs, rtol, atol):
    """Report lines for a failed numerics_test: runs is [(case name, args, kwargs, feed)]."""
    backends, note = list(config.backends), ""
    try:
        et_program, specs, tapped = _tapped_program(ep, backends)
    except Exception as e:  # e.g. taps between quantize and dequantize break XNNPACK's passes
        if not backends:
            return [f"  (no per-operator report: tapping every operator failed: {_first_line(e)})"]
        if _quantizes_weights_at_run_time(ep):
            return [f"  (no per-operator report: tapping for {', '.join(backends)} failed ({_first_line(e)}), "
                    f"and ExecuTorch's portable quantize_per_channel aborts on the program's float32 scales)"]
        try:  # the portable kernels still show where the export departs from eager
            et_program, specs, tapped = _tapped_program(ep, [])
            note = f" without {', '.join(backends)}, whose lowering failed with taps ({_first_line(e)})"
        except Exception as again:  # the report is a diagnosis; it must not hide the test's result
            return [f"  (no per-operator report: tapping every operator failed: {_first_line(again)})"]
    tapped_module = tapped.module()
    for name, args, kwargs, feed in runs:
        try:
            runtime = _run(et_program, [v.clone() if isinstance(v, torch.Tensor) else v for v in feed])
        except RuntimeError:  # the case the runtime rejects is reported above already
            continue
        with torch.no_grad():
            aot = torch.utils._pytree.tree_leaves(tapped_module(*args, **kwargs))
        eager = _eager_module_outputs(reference, args, kwargs)
        kernel, export = compare_case(specs, runtime, aot, eager, rtol, atol, _sqnr_floor(config))
        if not kernel and not export:
            continue
        lines = [f"  Where the .pte departs, case {name} (every operator's output tapped with "
                 f"ExecuTorch's devtools.intermediate_output_tap{note}):"]
        if kernel:
            lines.append(f"    first operator the runtime computes otherwise than the exported program: {kernel[0]}"
                         + (f" ({kernel[1]})" if len(kernel) > 1 else "")
                         + "; check its kernel (kernels) or the delegate that runs it")
        if export:
            lines.append(f"    first {export[0]}" + (f" ({export[1]})" if len(export) > 1 else "")
                         + "; the .pte follows the exported program there, so check the export of that "
                           "module: its decomposition or custom op")
        return lines
    floor = _sqnr_floor(config)
    limit = f"below SQNR {floor:g} dB" if floor is not None else f"past rtol {rtol:g}, atol {atol:g}"
    return [f"  No single operator departs {limit} (every operator's output "
            f"tapped with ExecuTorch's devtools.intermediate_output_tap{note}): the error accumulates."]


def _sqnr_floor(config):
    """The SQNR below which an operator departs, for tests judged by SQNR (quantized programs)."""
    if config.min_sqnr_db is not None:
        return float(config.min_sqnr_db)
    return contract.DEFAULT_QUANTIZED_SQNR_DB if config.quantized else None


def _first_line(error):
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}"
