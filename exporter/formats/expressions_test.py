"""formats/expressions.py: what torch and ExecuTorch write passes; Python that would do anything
else is refused. (Whole files: pt2_test.py, archives_test.py, //tests/hostile.)"""

import pytest

from exporter.formats import expressions

SYMBOL = "Symbol('s77', positive=True, integer=True)"

# Size expressions: torch's srepr (the zoo's .pt2 files), ExecuTorch's str() (its ETRecords), and
# the forms sympy writes for torch's other size functions.
WRITTEN = [
    SYMBOL,
    f"Mul(Integer(128), {SYMBOL})",
    f"Add(Mul(Integer(4), {SYMBOL}), Integer(-2))",  # a derived dim, 4*d-2
    f"Pow({SYMBOL}, Integer(2))",  # the transformer's attention
    "GreaterThan(Symbol('u0', integer=True), Integer(0))",  # a checked .item()
    f"StrictGreaterThan({SYMBOL}, Integer(4))",  # a cond on a size
    f"Mul(Symbol('s17', positive=True, integer=True), {SYMBOL})",
    f"FloorDiv({SYMBOL}, Integer(2))",
    f"FloatTrueDiv(ToFloat({SYMBOL}), Float('2.0', precision=53))",
    "And(GreaterThan(Symbol('u0', integer=True), Integer(0)), LessThan(Symbol('u0', integer=True), Integer(5)))",
    "Rational(1, 2)",
    "-oo",
    "true",
    "s43",
    "128*s27",
    "(s77//2) + Mod(s77, 3)",
    "(u0 >= 0) & (u0 <= 5)",
]

# Guards: torch's ShapeGuardPythonPrinter (the zoo's .pt2 files), and what it prints for math.
GUARDS = [
    "L['input_pos'].size()[0] == L['tokens'].size()[1]",
    "(2*L['x'].size()[0]) == L['y'].size()[0]",
    "((-2) + 4*L['x'].size()[0]) == L['y'].size()[0]",
    "L['x'].size()[0] == ((1 + L['y'].size()[0]) // 2)",
    "L['xs'][0].size()[0] == L['table']['w'].size()[0]",
    "L['w'].size()[0] <= 512",
    "math.floor(L['x'].size()[0] / 2) <= max(1, L['y'].stride()[0])",
    "torch.sym_float(L['x'].size()[0]) < math.inf and L['x'].storage_offset() == 0",
]

RUNS_CODE = "__import__('os').system('true')"

# Python that is not what the writers write: each could run code, or reach what could.
REFUSED = [
    RUNS_CODE,
    "exec('x')",
    f"Add({SYMBOL}, {RUNS_CODE})",
    f"Max({SYMBOL}, {RUNS_CODE!r})",  # sympy's Max sympifies a string argument again
    "Symbol('s0').__class__",
    "Symbol('s0', positive=open)",
    "Add(*[Integer(1)])",
    "(lambda: 0)()",
    "Integer(2)(3)",
    "s0 if s1 else s2",
    "[s0][0]",
    "s0 # a comment",
    "Add(s0,\n1)",
    "\uff45xec('x')",  # what Python reads as exec
    "+".join(["s0"] * 100_000),  # deeper than Python's parser goes
    42,
]

GUARDS_REFUSED = [
    RUNS_CODE + " is None",
    "L['x'].__class__",
    "L['x'].size()[0] == s0",
    "torch.os.system('true')",
    "math.remainder(1, 2)",
    "L['x'].size(dim=0)",
    "L['x\\''].size()[0]",
    "print(L)",
]


@pytest.mark.parametrize("text", WRITTEN)
def test_what_the_writers_write_passes(text):
    assert expressions.is_size_expression(text)


@pytest.mark.parametrize("text", GUARDS)
def test_guards_torch_writes_pass(text):
    assert expressions.is_guard(text)


@pytest.mark.parametrize("text", REFUSED, ids=range(len(REFUSED)))
def test_anything_else_is_refused(text):
    assert not expressions.is_size_expression(text)


@pytest.mark.parametrize("text", GUARDS_REFUSED + REFUSED, ids=range(len(GUARDS_REFUSED + REFUSED)))
def test_guards_that_do_anything_else_are_refused(text):
    assert not expressions.is_guard(text)
