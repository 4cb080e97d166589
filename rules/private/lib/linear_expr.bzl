"""Parses the size expressions of a shape_spec: an int, a dim name, or a*name+b ("2*dx", "dx+1")."""

def is_identifier(s):
    """True if s can name a dim (and a sympy symbol): letters, digits, _; no leading digit."""
    if not s or s[0].isdigit():
        return False
    return s.replace("_", "a").isalnum()

def _split_terms(s):
    """Splits "4*dx-2" into signed terms ["+4*dx", "-2"]; a sign after '*' stays in its term."""
    terms = []
    current = ""
    for i in range(len(s)):
        c = s[i]
        if c in "+-" and current and current[-1] != "*":
            terms.append(current)
            current = ""
        current += c
    terms.append(current)
    return terms

def _int_or_none(s):
    digits = s[1:] if s.startswith("-") or s.startswith("+") else s
    if digits and digits.isdigit():
        return int(s)
    return None

def parse_linear(expr):
    """Parses a derived size.

    Args:
      expr: the size as the BUILD file writes it, e.g. "2*dx" or "dx+1".

    Returns:
      struct(name, a, b, error): the size is a*name + b with an int a >= 1; or error set to a
      sentence saying what is wrong (the caller adds where it is).
    """
    s = expr.replace(" ", "")
    if not s:
        return struct(error = "is an empty string; write an int or a dim name")
    for bad in ("(", ")", "/", "**", "^", "%"):
        if bad in s:
            return struct(error = "is not linear in one dim: use only ints, one dim name, * and +/- " +
                                  "(e.g. \"2*dx\", \"dx+1\", \"4*dx-2\"); write products out without parentheses")
    names = {}
    a, b = 0, 0
    for term in _split_terms(s):
        sign = -1 if term.startswith("-") else 1
        body = term[1:] if term[0] in "+-" else term
        factors = body.split("*")
        if "" in factors:
            return struct(error = "is not a valid expression; write it like \"2*dx\" or \"dx+1\"")
        coefficient, name = sign, None
        for factor in factors:
            value = _int_or_none(factor)
            if value != None:
                coefficient *= value
            elif is_identifier(factor):
                if name != None:
                    kind = "non-linear" if name == factor else "a product of two dims"
                    return struct(error = "is {} ({}*{}); a derived size is a*dim+b for one dim".format(kind, name, factor))
                name = factor
            else:
                return struct(error = "has {}, which is neither an int nor a dim name".format(repr(factor)))
        if name == None:
            b += coefficient
        else:
            names[name] = True
            a += coefficient
    if len(names) > 1:
        return struct(error = "uses several dims ({}); a derived size depends on exactly one dim".format(
            ", ".join(sorted(names.keys())),
        ))
    if not names:
        return struct(error = "has no dim name; write the size as an int")
    if a < 1:
        return struct(error = "has coefficient {} for its dim; torch.export needs a positive int (e.g. \"2*dx\")".format(a))
    return struct(name = names.keys()[0], a = a, b = b, error = None)

def format_linear(name, a, b):
    """The canonical spelling of a*name + b.

    Args:
      name: the dim's name.
      a: its coefficient, an int >= 1.
      b: the offset, an int.

    Returns:
      A string such as "2*dx", "dx+1" or "4*dx-2".
    """
    text = name if a == 1 else "{}*{}".format(a, name)
    if b > 0:
        text += "+{}".format(b)
    elif b < 0:
        text += "-{}".format(-b)
    return text
