"""The analysis-time checks that several rules make, each written once.

Every failure is one line that starts with `where` ("numerics_test //pkg:name: "), names the
value at fault and says what to write instead. In every .bzl file of the rules, `where` is that
start of a message; the position of a fault inside a value is its `path` ("inputs[\"x\"][0]").
"""

def macro_label(name):
    """The label of target `name` in the package a macro is called from, for messages."""
    repo = native.repository_name()
    return "{}//{}:{}".format("" if repo == "@" else repo, native.package_name(), name)

def message_prefix(kind, label):
    """The start of a failure message, `where` in the functions of this file: "<kind> <label>: "."""
    return "{} {}: ".format(kind, label)

def check_one_of(where, attr, value, choices, fix = "pick one of those"):
    """Fails unless `value` (the BUILD file's `attr`) is in `choices`."""
    if value not in choices:
        fail("{}{} = {} is not one of {}; {}".format(where, attr, repr(value), choices, fix))

def check_method(where, named_by, method, program, owner = None):
    """Fails unless `program` has the method `method`.

    Args:
      where: the start of the message, naming the target.
      named_by: what names the method in the BUILD file, e.g. "max_planned_bytes names method".
      method: the method's name.
      program: the ExecuTorchProgramInfo.
      owner: how the message names the program; default its label.
    """
    if method not in program.methods:
        fail("{}{} {}, which {} does not have; use one of {}".format(
            where,
            named_by,
            repr(method),
            owner or program.label,
            sorted(program.methods.keys()),
        ))

def _is_decimal(text, signed):
    """True for "0.001", "1e-3", "5", ".5" (and "-2" when signed): a decimal number."""
    if signed and text.startswith("-"):
        text = text[1:]
    mantissa, _, exponent = text.lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    if exponent.startswith("-") or exponent.startswith("+"):
        exponent = exponent[1:]
    return (whole.isdigit() or (not whole and fraction.isdigit())) and \
           (not fraction or fraction.isdigit()) and \
           ("e" not in text.lower() or exponent.isdigit())

def parse_number(where, attr, value, what = "a tolerance", example = "1e-3", signed = False, at_most = None):
    """A number the BUILD file gave as an int, float or string, as a float; None when unset.

    Args:
      where: the start of the message, naming the target.
      attr: the attribute's name, e.g. "rtol".
      value: the value; None or "" for unset (a rule attr that the macro set to "").
      what: what the number is, for the message: "a tolerance", "a fraction", ...
      example: a good value, for the message.
      signed: whether a negative number is allowed.
      at_most: the largest allowed value, or None.

    Returns:
      The value as a float, or None.
    """
    if value == None or value == "":
        return None
    text = str(value).strip() if type(value) in ("int", "float", "string") else ""
    if not _is_decimal(text, signed) or (at_most != None and float(text) > at_most):
        if at_most != None:
            wanted = "a number in [0, {}]".format(at_most)
        else:
            wanted = "a number" if signed else "a number >= 0"
        fail("{}{} = {} is not {}; write {}, e.g. {}".format(where, attr, repr(value), what, wanted, example))
    return float(text)

def parse_tolerance(where, attr, value):
    """rtol or atol: a number >= 0 as a float, or None for the backend's default."""
    return parse_number(where, attr, value)

def number_attr(value):
    """A macro's optional number as the string attr its rule reads with parse_number ("" = unset)."""
    return str(value) if value != None else ""
