"""The expressions of a .pt2 or an ETRecord that torch or ExecuTorch runs as Python, checked
against what their writers write before either is loaded.

Read in torch 2.13's and ExecuTorch 1.5.1's sources, the JSON of a program holds two kinds:
- every SymExpr's `expr_str` (a symbolic size, stride or offset, a symbolic argument or output,
  a condition), which goes to sympy.sympify, and sympify evaluates Python
  (`__import__('os').system(...)` runs): torch.export.load
  (torch/_export/serde/serialize.py, GraphModuleDeserializer._parse_sym_expr) and ExecuTorch's
  ETRecord reader (executorch/exir/serde/export_serialize.py, deserialize_sym_int and
  deserialize_sym_bool, also for the programs inside lowered modules);
- the program's `guards_code`, which ExportedProgram.module() makes into a function with exec
  (torch/export/_unlift.py, _convert_guards_code_to_fn) and runs at every call.
range_constraints' keys are only compared with printed expressions, never evaluated.

What the writers write, and so all that is accepted:
- torch: sympy's srepr, `Mul(Integer(2), Symbol('s77', positive=True, integer=True))`;
- ExecuTorch: str(), `128*s27`;
- guards: torch's ShapeGuardPythonPrinter, `(2*L['x'].size()[0]) == L['y'].size()[0]`.
Each must parse, by Python's ast (which runs nothing), into numbers, names, arithmetic and
comparisons, calls of sympy's and torch's size functions (an expression), and for a guard the
inputs' sizes, a few builtins and math's functions. An attribute, a subscript, a lambda, a
string other than a name or a number, or any other call is refused.
"""

import ast
import json
import re

from exporter.core.errors import BadFile

# The classes sympy's srepr and str() write for size, bool and float expressions, and torch's
# size functions (the names torch.export.load defines for sympify: serialize.py,
# GraphModuleDeserializer.deserialize's sympy_functions).
_SIZE_FUNCTIONS = frozenset("""
    Symbol Integer Rational Float Add Mul Pow Max Min Abs floor ceiling Piecewise ExprCondPair
    Equality Unequality StrictLessThan StrictGreaterThan LessThan GreaterThan Eq Ne Lt Le Gt Ge
    And Or Not Xor
    FloorDiv ModularIndexing Where PythonMod Mod CleanDiv CeilToInt FloorToInt CeilDiv LShift
    RShift PowByNatural FloatPow FloatTrueDiv IntTrueDiv IsNonOverlappingAndDenseIndicator
    TruncToFloat TruncToInt RoundToInt RoundDecimal ToFloat Identity
""".split())
# What torch's guard printer calls (torch/utils/_sympy/printers.py, PythonPrinter).
_GUARD_CALLS = {
    None: frozenset({"abs", "max", "min", "round", "float", "int"}),
    "math": frozenset("floor ceil trunc sqrt cos cosh acos sin sinh asin tan tanh atan log2".split()),
    "torch": frozenset({"sym_float", "_sym_sqrt"}),
}
_GUARD_VALUES = {"math": frozenset({"inf", "nan"})}
_INPUT_METHODS = frozenset({"size", "stride", "storage_offset"})
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift,
              ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor, ast.USub, ast.UAdd, ast.Invert,
              ast.Not, ast.And, ast.Or, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# Strings: a symbol's name or a float's digits (sympy's functions sympify a string argument
# again), an input's name in a guard; never a quote, a backslash, a parenthesis or a dot of an
# attribute.
_STRINGS = {False: re.compile(r"[A-Za-z][A-Za-z0-9_]*|[-+]?[0-9]+(\.[0-9]*)?(e[-+]?[0-9]+)?"),
            True: re.compile(r"[\w .+-]*")}


def _parsed(text):
    """The expression's ast, or None when it is no single ASCII expression of one line."""
    if not isinstance(text, str) or not text.isascii() or not text.isprintable() or "#" in text:
        return None
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _ok(node, guard):
    """Whether node is made only of what the writers write (see the module's docstring)."""
    if isinstance(node, ast.Constant):
        value = node.value
        return type(value) in (int, float, bool) or (type(value) is str and bool(_STRINGS[guard].fullmatch(value)))
    if isinstance(node, ast.Name):
        return node.id in ("L", "inf") if guard else bool(_NAME.fullmatch(node.id))
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare)):
        return all(_ok(child, guard) if isinstance(child, ast.expr) else isinstance(child, _OPERATORS)
                   for child in ast.iter_child_nodes(node))
    if isinstance(node, ast.Call):
        return _call_ok(node, guard)
    if guard and isinstance(node, ast.Subscript):  # L['x'], L['xs'][0], .size()[1]
        return isinstance(node.slice, ast.Constant) and _ok(node.slice, guard) and _ok(node.value, guard)
    if guard and isinstance(node, ast.Attribute):  # math.inf
        return isinstance(node.value, ast.Name) and node.attr in _GUARD_VALUES.get(node.value.id, ())
    return False


def _call_ok(call, guard):
    function = call.func
    if not guard:
        named = isinstance(function, ast.Name) and function.id in _SIZE_FUNCTIONS
        keywords = all(k.arg and _NAME.fullmatch(k.arg) and isinstance(k.value, ast.Constant)
                       and type(k.value.value) in (bool, int) for k in call.keywords)
    elif isinstance(function, ast.Attribute) and function.attr in _INPUT_METHODS:  # L['x'].size()
        named, keywords = _ok(function.value, guard), not call.keywords
    else:  # max(...), math.floor(...)
        module, name = _dotted(function)
        named, keywords = name in _GUARD_CALLS.get(module, ()), not call.keywords
    return bool(named and keywords) and all(_ok(argument, guard) for argument in call.args)


def _dotted(function):
    """("math", "floor") for math.floor, (None, "max") for max, ("", "") for anything else."""
    if isinstance(function, ast.Name):
        return None, function.id
    if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
        return function.value.id, function.attr
    return "", ""


def _written(text, guard):
    node = _parsed(text)
    try:
        return node is not None and _ok(node, guard)
    except RecursionError:  # nested deeper than torch ever writes
        return False


def is_size_expression(text):
    """Whether text is a size expression torch or ExecuTorch writes (an `expr_str`)."""
    return _written(text, guard=False)


def is_guard(text):
    """Whether text is a guard torch writes (an entry of `guards_code`)."""
    return _written(text, guard=True)


class _Refused(Exception):
    """What in a program's JSON is not what the writers write."""


def _check_object(obj):
    """json.loads' object_hook: refuses an object whose expression or guards could run code."""
    if "expr_str" in obj and not is_size_expression(obj["expr_str"]):
        raise _Refused(f"the size expression {repr(obj['expr_str'])[:120]}")
    guards = obj.get("guards_code") or []
    if not isinstance(guards, list):
        raise _Refused(f"guards_code {repr(guards)[:120]}")
    for guard in guards:
        if not is_guard(guard):
            raise _Refused(f"the guard {repr(guard)[:120]}")
    nested = obj.get("as_string")
    if isinstance(nested, str) and nested.startswith("{"):  # ExecuTorch: a lowered module's program
        try:
            json.loads(nested, object_hook=_check_object)
        except (ValueError, RecursionError):
            pass  # no JSON: ExecuTorch's reader refuses it itself
    return obj


def check_program(raw, entry, path):
    """Refuses the JSON of a program (a .pt2's models/<name>.json, an ETRecord's programs) whose
    size expressions or guards are not what torch and ExecuTorch write: loading it would run
    them as Python."""
    try:
        json.loads(raw, object_hook=_check_object)
    except _Refused as e:
        raise BadFile(f"{path}: refused: entry {entry} holds {e}, which torch does not write; loading "
                      f"it would run it as Python") from None
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise BadFile(f"{path}: entry {entry} is not JSON: {str(e)[:200]}") from None
