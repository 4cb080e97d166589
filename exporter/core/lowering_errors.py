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
from exporter.core.errors import fix

_MISSING_OUT = re.compile(r"Missing out variants: (\{.*?\})")
# ExecuTorch's verifier: "Operator: <EdgeOpOverload: aten.abs.default>: schema = ... with args: {...}".
_VERIFIER_OPERATOR = re.compile(r"Operator: <EdgeOpOverload: ([\w.]+)>: schema = .*? with args: (\{[^}]*\})")
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in \S+\n\s*(.+)')
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
        change = 'name that axis as a dim with a max there: write "n" at it and add dims = {"n": dim(max = N)}'
    else:
        root = _root_name(asked)
        feature = f'dim "{root}"' if root == asked else f'"{asked}" of dim "{root}"'
        change = f'give dims["{root}"] a max there, e.g. dim(max = N)'
    more = f" (and {len(sizes) - 1} more sizes)" if len(sizes) > 1 else ""
    traced_text = f" {traced}" if traced is not None else ""
    return (f"{path} axis {axis} ({feature}){more} has no max in shape_spec {ctx.spec_text}, and "
            f"ExecuTorch plans memory for the largest size, so the .pte would accept only the "
            f"traced size{traced_text}; {fix('dim_max', change)}")


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


def _stack_line(node):
    """' (path:line: code)' of the user's frame in a node's stack trace, which only a program still
    in memory has (a .pt2 keeps none: see the module docstring), or ''."""
    trace = (node.meta.get("stack_trace") or "") if node is not None else ""
    frames = _FRAME.findall(trace)
    if not frames:
        return ""
    path, line, code = frames[-1]
    return f" ({path}:{line}: {code.strip()})"


def _call(node):
    """'aten.abs.default (in M, at its abs call)': an operator and where the model calls it."""
    place = (where(node).strip() + _stack_line(node)).strip()
    return f"{operators.name(node.target)} ({place})" if place else operators.name(node.target)


def executorch_detail(text):
    """ExecuTorch's account of the operators its verifier refused, condensed to one line:
    'aten.abs.default (self complex64 -> float32)'; '' when its message has none."""
    details = []
    for op, args in _VERIFIER_OPERATOR.findall(text):
        typed = re.findall(r"'(\w+)': torch\.(\w+)", args)
        inputs = ", ".join(f"{name} {dtype}" for name, dtype in typed if not name.startswith("__ret"))
        outputs = ", ".join(dtype for name, dtype in typed if name.startswith("__ret"))
        details.append(f"{op} ({inputs}{' -> ' + outputs if outputs else ''})")
    return "; ".join(details)


def complex_values(ep):
    """[(node, dtype name)] of the operators whose result is a complex tensor, in graph order."""
    found = []
    for node in ep.graph.nodes:
        value = node.meta.get("val")
        if node.op == "call_function" and isinstance(value, torch.Tensor) and value.dtype.is_complex:
            found.append((node, str(value.dtype).replace("torch.", "")))
    return found


def diagnose(ep, exc):
    """The reason a failed lowering has in the program itself, or None: a complex tensor, which
    ExecuTorch cannot hold (its verifier names only the operator that takes one)."""
    made = complex_values(ep)
    if not made:
        return None
    producer, dtype = made[0]
    taker = next((user for user in producer.users if user.op == "call_function"), None)
    detail = executorch_detail(str(exc))
    said = f" (ExecuTorch: {type(exc).__name__}, mismatched dtypes: {detail})" if detail else ""
    what = (f"{_call(taker)} takes a {dtype} tensor, made by {_call(producer)}" if taker is not None
            else f"{_call(producer)} makes a {dtype} tensor")
    return (f"{what}, and ExecuTorch has no complex dtypes{said}; "
            + fix("real_tensors", "compute with real tensors instead: for an FFT, its real and imaginary "
                                  "parts as matmuls with cos and sin matrices (torch.view_as_real leaves the "
                                  "complex tensor in the program)"))


def _portable_fix(ctx, ops):
    """A BUILD edit on the torch_export that gives the portable runtime ops it has kernels for,
    or None: the decomposition of Python custom ops."""
    custom = [op for op in ops if not op.startswith("aten")]
    decompose = list(ctx.export.decompose)
    names = [n for n in (".".join(op.split(".")[:2]) for op in custom) if n not in decompose]
    if not names:
        return None
    ir = "" if ctx.export.ir != "training" else ' and ir = "inference"'
    return fix("decompose_custom_op",
               f"set decompose = {_list(names + decompose)}{ir} on torch_export {ctx.exported_text} so that it "
               f"exports the op's decomposition in ATen ops (register one with "
               f"torch._decomp.register_decomposition if it has none)")


def _list(names):
    return "[" + ", ".join(f'"{n}"' for n in names) + "]"


def _then(text, suggestion):
    """text; the suggestion, or where the full story is when there is none."""
    return f"{text}; {suggestion or 'ExecuTorch' + chr(39) + 's full message is in the log'}"


def unresolved_message(ops, ctx):
    """The one-line error for custom operators the lowering cannot load."""
    return _then(f"{ctx.exported_text} calls {', '.join(ops)}, which ExecuTorch has no kernel for (a Python "
                 f"custom op)", _portable_fix(ctx, ops))


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
        return _then(f"{head}: no kernel for {', '.join(dotted)} (ExecuTorch needs an out-variant "
                     f"kernel for every operator outside a delegate)", _portable_fix(ctx, dotted))

    flow = _CONTROL_FLOW.search(text)
    if flow:
        op = f"torch.ops.higher_order.{flow.group(1)}"
        return (f"{head}: ExecuTorch cannot run {op}{where(node)}; "
                + fix("unroll_control_flow", f"rewrite that part of the model without {flow.group(1)}: unroll it "
                                             f"to a bounded number of steps, with torch.where (or torch.cond, "
                                             f"which ExecuTorch runs) choosing each step's result"))

    at = f" at {operators.name(node.target)}{where(node)}{_stack_line(node)}" if node is not None else ""
    detail = executorch_detail(text)
    reason = f"{type(exc).__name__}: {first.rstrip('.: ')}" + (f": {detail}" if detail else "")
    if _in_xnnpack(exc) and "xnnpack" in ctx.backends:
        fixes = fix("portable_backend", f"set backends = [] on {ctx.label} to run it on the portable runtime")
        if "dynamic" in first.lower():
            fixes += ", or " + fix("one_dynamic_size", f"make all but one of the input's dynamic sizes static in "
                                                       f"{ctx.spec_text}")
        return f"{head}: the XNNPACK delegate cannot take it{at}: {reason}; {fixes}"
    custom = [operators.name(node.target)] if node is not None else []
    return _then(f"{head}{at}: {reason}", _portable_fix(ctx, custom))
