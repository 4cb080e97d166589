"""Size expressions that both parsers read: rules/private/lib/linear_expr.bzl at analysis time and
exporter/core/shape_spec.py (sympy) in the exporter. :expression_parity_test checks that they agree."""

# (text, (name, a, b)) for sizes a*name + b.
GOOD = [
    ("dx", ("dx", 1, 0)),
    ("2*dx", ("dx", 2, 0)),
    ("dx*2", ("dx", 2, 0)),
    ("dx+1", ("dx", 1, 1)),
    ("4*dx-2", ("dx", 4, -2)),
    (" 3 * seq + 10 ", ("seq", 3, 10)),
    ("-2+2*n", ("n", 2, -2)),
    ("n+n", ("n", 2, 0)),
    ("3*n-n", ("n", 2, 0)),
    ("batch_2", ("batch_2", 1, 0)),
    ("2*3*n", ("n", 6, 0)),
]

# Texts both refuse: not linear in one dim, or not a size at all.
BAD = [
    "",
    "n*n",
    "a+b",
    "n/2",
    "n**2",
    "2",
    "-n",
    "n-n",
    "3n",
    "n+",
    "my-dim",
]

# Refused at analysis only: parentheses never reach the exporter, whose sympy parser expands them.
ANALYSIS_ONLY = [
    "2*(n+1)",
]
