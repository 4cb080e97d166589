"""Translates torch.export's errors into the user's terms: the input, the dim, the BUILD edit.

torch explains in Python (`dx = Dim('dx', max=99)`, `L['y'].size()[0]`); the user wrote Starlark
(`dims["dx"] = dim(max = 99)`, `inputs["y"] axis 0`). Every function here returns one line.
"""

import json
import linecache
import os
import re
import sysconfig
import traceback

import sympy

from exporter.core import shape_spec
from exporter.core.errors import fix

_SOURCE = re.compile(r"L((?:\[[^\[\]]+\])+)\.size\(\)\[(\d+)\]")
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.+)')
_CAUSED_BY = re.compile(r"Caused by: (.+?)\s+# (\S+?):(\d+) in (\S+)")
_DIM_FIX = re.compile(r"^(\w+) = Dim\('\w+'(.*)\)$")
_BOUND = re.compile(r"(min|max)=(\d+)")


_EXPORTER_DIR = os.path.dirname(os.path.abspath(__file__))


# Python's own library: a frame in socket.py or importlib is never the user's line.
_STDLIB = os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep


def _is_user_file(path):
    """False for torch's, Python's and the exporter's own files (never the user's frames)."""
    return ("site-packages" not in path and not path.startswith("<")
            and not os.path.realpath(path).startswith(_STDLIB)
            and os.path.dirname(os.path.abspath(path)) != _EXPORTER_DIR)


def _relative(path):
    """A path relative to the action's working directory (the execroot), so it reads stably."""
    cwd = os.path.join(os.getcwd(), "")  # "/", not "//", where an executor runs it at the root
    return path[len(cwd):] if path.startswith(cwd) else path


def _innermost_user_frame(exc):
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if _is_user_file(frame.filename):
            return frame
    return None


def user_frame(exc):
    """` (at path:line)` for the innermost traceback frame in user code, or ''."""
    frame = _innermost_user_frame(exc)
    return f" (at {_relative(frame.filename)}:{frame.lineno})" if frame else ""


def _user_source(text, exc):
    """`path:line (code)` of the user's line that torch's message points at, or ''."""
    frames = [m for m in _FRAME.finditer(text) if _is_user_file(m.group(1))]
    if frames:
        path, line, _, code = frames[-1].groups()
    else:
        caused = _CAUSED_BY.search(text)
        if caused and _is_user_file(caused.group(2)):
            code, path, line = caused.group(1), caused.group(2), caused.group(3)
        else:
            frame = _innermost_user_frame(exc)
            if frame is None:
                return ""
            path, line, code = frame.filename, frame.lineno, frame.line or ""
    code = code.strip() or linecache.getline(path, int(line)).strip()
    return f"{_relative(path)}:{line}" + (f" ({code})" if code else "")


def _in_user_terms(line):
    """Rewrites torch's `L['y'].size()[0]` as `inputs["y"] axis 0`."""
    def rewrite(m):
        keys = re.findall(r"\[([^\[\]]+)\]", m.group(1))
        path = "".join(f"[{k.replace(chr(39), chr(34))}]" for k in keys)
        return f"inputs{path} axis {m.group(2)}"

    return _SOURCE.sub(rewrite, line).strip()


def _sentence(text):
    """text ending in exactly one full stop."""
    return text.strip().rstrip(".") + "."


def _suggested_fixes(text):
    lines = text.split("Suggested fixes:", 1)[1].splitlines() if "Suggested fixes:" in text else []
    fixes = []
    for line in lines[1:] if lines and not lines[0].strip() else lines:
        if not line.strip():
            break
        fixes.append(line.strip())
    return fixes


def _dim_call(bounds):
    return "dim(" + ", ".join(f"{k} = {v}" for k, v in bounds.items() if v is not None) + ")"


def _substitute(size, name, replacement, symbols):
    """`size` (e.g. "2*dy") with dim `name` replaced by `replacement` (e.g. "dx + 1")."""
    new = sympy.sympify(replacement, locals=symbols)
    expr = sympy.expand(sympy.sympify(size, locals=symbols).subs(symbols[name], new))
    if expr.is_Integer:
        return int(expr)
    parsed = shape_spec.parse_size(str(expr), {str(s): None for s in expr.free_symbols})
    return shape_spec.format_linear(parsed)


def _edit_for_fix(suggested, ctx):
    """One of torch's suggested fixes, as the equivalent shape_spec edit."""
    dims = ctx.spec.get("dims", {})
    uses = shape_spec.dim_uses(ctx.spec)
    m = _DIM_FIX.match(suggested)
    if m:  # `dx = Dim('dx', max=99)`: a new range, keeping the bound torch does not mention
        name, rest = m.groups()
        bounds = {k: dims.get(name, {}).get(k) for k in ("min", "max")}
        bounds.update({k: int(v) for k, v in _BOUND.findall(rest)})
        verb = "" if name in dims else "add "
        return f"{verb}dims[{json.dumps(name)}] = {_dim_call(bounds)}"
    # `dy = dx + 1` or `dx = 4`: every size written with that dim changes.
    name, _, value = (part.strip() for part in suggested.partition("="))
    if name not in uses:
        return f"torch suggests `{suggested}`"
    names = set(dims) | set(re.findall(r"[A-Za-z_]\w*", value))
    symbols = {n: sympy.Symbol(n, integer=True) for n in names}
    try:
        edits = [
            f"{path} axis {axis} becomes {json.dumps(_substitute(size, name, value, symbols))}"
            for path, axis, size in uses[name]
        ]
    except (sympy.SympifyError, ValueError, TypeError):
        return f"torch suggests `{suggested}`"
    return "; ".join(edits) + f"; remove dims[{json.dumps(name)}]"


def _constraint_violation(text, ctx):
    lines = [line.strip()[2:] for line in text.splitlines() if line.strip().startswith("- ")]
    first = _in_user_terms(lines[0]) if lines else text.splitlines()[0]
    # torch's advice on mark_dynamic and Dim.DYNAMIC is Python; the edits below replace it.
    first = re.sub(r"You marked (.+?) as dynamic but your code specialized it to be a constant "
                   r"\((\d+)\)\..*", r"the model needs \1 to be exactly \2.", first)
    fixes = [_edit_for_fix(f, ctx) for f in _suggested_fixes(text)]
    marked = re.search(r"You marked (.+?) as dynamic but your code specialized it to be a "
                       r"constant \((\d+)\)", text)
    if fixes:
        fix_text = fix("shape_spec_edit", "; ".join(fixes))
    elif marked:
        where, value = _in_user_terms(marked.group(1)), marked.group(2)
        fix_text = fix("static_size", f"make {where} static: write {value} there and drop its DYNAMIC hint "
                                      f"(or use AUTO, which lets export specialise it)")
    else:
        fix_text = "see the log for torch's full explanation"
    return (f"shape_spec {ctx.spec_label} does not fit model {ctx.model}: {_sentence(first)} "
            f"Change the shape_spec: {fix_text}")


def _data_dependent(text, exc, ctx):
    lines = text.splitlines()
    key = next((line for line in lines if "Could not guard on data-dependent" in line), lines[0])
    key = key[key.index("Could not guard"):] if "Could not guard" in key else key
    key = key.split(" (unhinted")[0].split("(Size-like symbols")[0].strip().rstrip(".")
    source = _user_source(text, exc)
    where = f" at {source}" if source else ""
    return (f"torch.export of model {ctx.model} (shape_spec {ctx.spec_label}) hit a "
            f"data-dependent value: {_sentence(key + where)} "
            f"Fix the model: " + fix("bound_data_dependent", "bound the value with torch._check(...) right after "
                                     ".item() (e.g. torch._check(n <= 64)), or express the branch with torch.cond"))


def _graph_break(text, exc, ctx):
    key = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    source = _user_source(text, exc)
    where = f" at {source}" if source else ""
    return (f"strict torch.export (TorchDynamo) cannot trace model {ctx.model} (shape_spec "
            f"{ctx.spec_label}): {_sentence(key + where)} "
            + fix("strict_false", f"Set strict = False on torch_export {ctx.label} (non-strict export runs "
                                  f"this Python as is)"))


def _shapes_text(spec):
    """'x ["n", 3] float32, y [4] int64': the spec's tensors as the BUILD file writes them."""
    parts = []
    for path, tensor in shape_spec.walk_tensors(spec):
        shape = ", ".join(json.dumps(s) for s in tensor["shape"])
        parts.append(f"{path[len('inputs['):-1].strip(chr(34))} [{shape}] {tensor['dtype']}"
                     if path.count("[") == 1 else f"{path} [{shape}] {tensor['dtype']}")
    return ", ".join(parts) or "no tensors"


_UNKNOWN_OUTPUT = re.compile(r"Found <class '([\w.]+)'> in output, which is not a known type")


def _unknown_output(found, ctx):
    qualified = found.group(1)
    return (f"model {ctx.model} returns {qualified}, which torch.export cannot take apart (an "
            f"unregistered container); "
            + fix("register_output_class", f"register it with torch.export.register_dataclass("
                                           f"{qualified.rsplit('.', 1)[-1]}) where the class is defined, "
                                           f"or return a dict or tuple"))


def explain(exc, ctx):
    """The one-line message for an exception raised by torch.export.export."""
    text = str(exc)
    name = type(exc).__name__
    unknown_output = _UNKNOWN_OUTPUT.search(text)
    if unknown_output:
        return _unknown_output(unknown_output, ctx)
    if "Constraints violated" in text or name == "ConstraintViolationError":
        return _constraint_violation(text, ctx)
    if "Could not guard on data-dependent" in text or name == "GuardOnDataDependentSymNode":
        return _data_dependent(text, exc, ctx)
    if name == "Unsupported" or (ctx.strict and "graph break" in text.lower()):
        return _graph_break(text, exc, ctx)
    key = next((line.strip() for line in text.splitlines() if line.strip()), "")
    source = _user_source(text, exc)
    where = f" at {source}" if source else ""
    return (f"torch.export failed for model {ctx.model} with shape_spec {ctx.spec_label}: "
            f"{name}: {_sentence(_in_user_terms(key) + where)} Check the shapes and dtypes in the "
            f"shape_spec ({_shapes_text(ctx.spec)}) against the model; torch's full message is in the log")
