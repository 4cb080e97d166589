"""Parses byte sizes written in BUILD files: an int of bytes, or "4MiB", "512KiB", "1.5MB"."""

# Decimal units are powers of 1000 (SI), binary units powers of 1024 (IEC), as in `du --si`
# and `ls -h` respectively. Case matters: "mb" would be millibits.
UNITS = {
    "B": 1,
    "kB": 1000,
    "KB": 1000,
    "MB": 1000 * 1000,
    "GB": 1000 * 1000 * 1000,
    "KiB": 1024,
    "MiB": 1024 * 1024,
    "GiB": 1024 * 1024 * 1024,
}

UNITS_HELP = "an int of bytes, or a number and a unit: B, kB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024), e.g. \"4MiB\" or \"1.5MB\""

def _split_unit(text):
    """(number text, unit) of "1.5 MiB"; the unit is "B" when none is written."""
    for i in range(len(text)):
        if not (text[i].isdigit() or text[i] == "."):
            return text[:i].strip(), text[i:].strip()
    return text, "B"

def _scaled(number, scale):
    """number (digits with at most one '.') times scale, rounded down to whole bytes; or None."""
    whole, _, fraction = number.partition(".")
    if not whole.isdigit() or (fraction and not fraction.isdigit()) or number.count(".") > 1:
        return None
    return int(whole + fraction) * scale // int("1" + "0" * len(fraction))

def parse_size(value):
    """Parses a size limit.

    Args:
      value: an int (bytes) or a string such as "4MiB", "512 KiB", "1.5MB" or "1000".

    Returns:
      struct(bytes, error): the size in bytes (fractions of a byte are dropped), or error set to
      what is wrong (the caller adds the target and the attribute).
    """
    if type(value) == "int" and value <= 0:
        return struct(bytes = None, error = "is not a positive size; give a limit of at least 1 byte")
    if type(value) in ("int", "float"):
        text = str(value)
    elif type(value) == "string":
        text = value.strip()
    else:
        return struct(bytes = None, error = "is a {}; write {}".format(type(value), UNITS_HELP))
    number, unit = _split_unit(text)
    if unit not in UNITS:
        return struct(bytes = None, error = "is not a size; write {}".format(UNITS_HELP))
    size = _scaled(number, UNITS[unit]) if number else None
    if size == None:
        return struct(bytes = None, error = "is not a size; write {}".format(UNITS_HELP))
    if size <= 0:
        return struct(bytes = None, error = "is not a positive size; give a limit of at least 1 byte")
    return struct(bytes = size, error = None)

def parse_percent(value):
    """Parses a growth allowance: a number >= 0.

    Args:
      value: an int, a float or a string such as "2.5".

    Returns:
      struct(percent, error): the percentage as a float, or error set to what is wrong.
    """
    text = str(value).strip() if type(value) in ("int", "float", "string") else ""
    whole, _, fraction = text.partition(".")
    if not whole.isdigit() or (fraction and not fraction.isdigit()):
        return struct(percent = None, error = "is not a percentage; write a number >= 0, e.g. 2 or \"0.5\"")
    return struct(percent = float(text), error = None)
