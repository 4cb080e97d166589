"""Lowering failures in the user's terms: the operator, where it sits in the model, the
backend, and a BUILD edit that applies to this target (never the setting it already has).

The .pt2 keeps no source lines (they would change its bytes with every edit above them, and
defeat Bazel's early cutoff), so "where" is the module path and class that torch.export
recorded in the node's nn_module_stack, and the Python call (torch_fn) that made it.
"""

import ast
import re

import torch

from exporter.core import operators

_MISSING_OUT = re.compile(r"Missing out variants: (\{.*?\})")
_CONTROL_FLOW = re.compile(r"Unsupported control flow operator: (\w+)")
_XNNPACK_FILES = "executorch/backends/xnnpack/"


def unbounded_sizes(ep, spec):
    """[(input path, axis, how it was asked for, traced size)] of sizes with no upper bound."""
    from torch.utils._sympy.value_ranges import bound_sympy

    from exporter.core import ranges, shape_spec

    leaves = shape_spec.program_leaves(ep, spec) if spec else None
    found = []
    for index, val in enumerate(shape_spec.user_input_values(ep)):
        if not isinstance(val, torch.Tensor):
            continue
        path, tensor = leaves[index] if leaves else (f"input {index}", None)
        for axis, size in enumerate(val.shape):
            if not isinstance(size, torch.SymInt) or size.node.expr.is_number:
                continue
            if ranges.bound(bound_sympy(size.node.expr, ep.range_constraints).upper) is None:
                asked, traced = "a dynamic size", None
                if tensor is not None:
                    written = tensor["shape"][axis]
                    hint = (tensor.get("hints") or [None] * len(tensor["shape"]))[axis]
                    asked = written if isinstance(written, str) else f"{hint} hint"
                    traced = (tensor.get("example_shape") or [None] * len(tensor["shape"]))[axis]
                found.append((path, axis, asked, traced))
    return found


def unbounded_message(sizes, ctx):
    """The one-line error for sizes with no upper bound (see unbounded_sizes).

    ExecuTorch plans every buffer for the largest size an input may take. A size with no max
    is planned for the size it was traced at, so the .pte would reject anything larger while
    the .pt2 accepts it: better to stop the build.
    """
    path, axis, asked, traced = sizes[0]
    if asked.endswith(" hint") or asked == "a dynamic size":
        feature = f"its {asked}" if asked.endswith(" hint") else asked
        fix = 'name that axis as a dim with a max there: write "n" at it and add dims = {"n": dim(max = N)}'
    else:
        root = _root_name(asked)
        feature = f'dim "{root}"' if root == asked else f'"{asked}" of dim "{root}"'
        fix = f'give dims["{root}"] a max there, e.g. dim(max = N)'
    more = f" (and {len(sizes) - 1} more sizes)" if len(sizes) > 1 else ""
    traced_text = f" {traced}" if traced is not None else ""
    return (f"{path} axis {axis} ({feature}){more} has no max in shape_spec {ctx.spec_text}, and "
            f"ExecuTorch plans memory for the largest size, so the .pte would accept only the "
            f"traced size{traced_text}; {fix}")


def _root_name(expression):
    """'seq' of '2*seq+1'."""
    names = re.findall(r"[A-Za-z_]\w*", expression)
    return names[0] if names else expression


def _failing_node(exc):
    """The innermost fx Node that a traceback frame was working on (skipping allocations)."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        for name in ("node", "n"):
            value = tb.tb_frame.f_locals.get(name)
            if isinstance(value, torch.fx.Node) and value.op == "call_function" and \
                    "alloc" not in str(value.target):
                found = value
        tb = tb.tb_next
    return found


def _in_xnnpack(exc):
    tb = exc.__traceback__
    while tb is not None:
        if _XNNPACK_FILES in tb.tb_frame.f_code.co_filename.replace("\\", "/"):
            return True
        tb = tb.tb_next
    return False


def where(node):
    """' in features.0.0 (torch.nn.modules.conv.Conv2d), at its conv2d call', as far as the .pt2 knows."""
    if node is None:
        return ""
    stack = node.meta.get("nn_module_stack") or {}
    text = ""
    if stack:
        path, cls = list(stack.values())[-1]
        cls = cls if isinstance(cls, str) else f"{cls.__module__}.{cls.__qualname__}"
        text = f" in {path} ({cls})" if path else f" in {cls}"
    fn = node.meta.get("torch_fn")
    if fn and len(fn) == 2:
        text += f", at its {fn[1].split('.')[-1]} call"
    return text


def _portable_fix(ctx, ops):
    """A BUILD edit on the torch_export that gives ops the portable runtime can run."""
    custom = [op for op in ops if not op.startswith("aten")]
    decompose = list(ctx.export.decompose)
    if custom:
        names = [".".join(op.split(".")[:2]) for op in custom]
        names = [n for n in names if n not in decompose]
        ir = "" if ctx.export.ir != "training" else ' and ir = "inference"'
        if names:
            return (f"set decompose = {_list(names + decompose)}{ir} on torch_export {ctx.exported_text} "
                    f"so that it exports the op's decomposition in ATen ops (register one with "
                    f"torch._decomp.register_decomposition if it has none)")
    if ctx.export.ir != "core_aten":
        return f'set ir = "core_aten" on torch_export {ctx.exported_text} (the ops the portable runtime has kernels for)'
    return f"add the operators to decompose on torch_export {ctx.exported_text}"


def _list(names):
    return "[" + ", ".join(f'"{n}"' for n in names) + "]"


def unresolved_message(ops, ctx):
    """The one-line error for custom operators the lowering cannot load."""
    return (f"{ctx.exported_text} calls {', '.join(ops)}, which ExecuTorch has no kernel for (a Python "
            f"custom op); {_portable_fix(ctx, ops)}")


def explain(exc, ctx):
    """The one-line message for an exception raised while lowering ctx.exported."""
    text = str(exc)
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    first = first.split(". ")[0]  # the first sentence; torch and ExecuTorch add paragraphs
    node = _failing_node(exc)
    head = f"ExecuTorch lowering of {ctx.exported_text} for {ctx.backend_text} failed"

    missing = _MISSING_OUT.search(text)
    if missing:
        ops = sorted(ast.literal_eval(missing.group(1)))
        dotted = [operators.dotted(op) for op in ops]
        return (f"{head}: no kernel for {', '.join(dotted)} (ExecuTorch needs an out-variant "
                f"kernel for every operator outside a delegate); {_portable_fix(ctx, dotted)}")

    flow = _CONTROL_FLOW.search(text)
    if flow:
        op = f"torch.ops.higher_order.{flow.group(1)}"
        return (f"{head}: ExecuTorch cannot run {op}{where(node)}; rewrite that part of the model "
                f"without {flow.group(1)} (unroll it, or use torch.cond, which ExecuTorch runs)")

    at = f" at {operators.name(node.target)}{where(node)}" if node is not None else ""
    reason = f"{type(exc).__name__}: {first.rstrip('. ')}"
    if _in_xnnpack(exc) and "xnnpack" in ctx.backends:
        fix = f"set backends = [] on {ctx.label} to run it on the portable runtime"
        if "dynamic" in first.lower():
            fix += f", or make all but one of the input's dynamic sizes static in {ctx.spec_text}"
        return f"{head}: the XNNPACK delegate cannot take it{at}: {reason}; {fix}"
    if "xnnpack" in ctx.backends:
        fix = f"try backends = [] on {ctx.label} to see whether the delegate is at fault"
    else:
        fix = _portable_fix(ctx, [operators.name(node.target)] if node is not None else [])
    return f"{head}{at}: {reason}; {fix}"
