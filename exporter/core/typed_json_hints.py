"""The readers of typed_json's hints: reader(hint) is read(value, path), which returns the JSON
value as the hint's type or raises ConfigError in one line naming path and the expected type.
A hint no reader can check raises TypeError when its reader is made (typed_json.py says which
hints read how)."""

import dataclasses
import enum
import functools
import types
import typing

_SCALARS = (str, int, float, bool)
_SHOWN_CHARS = 80  # a value in a message, cut so that the message stays one short line


class ConfigError(ValueError):
    """A config that does not have the shape of its class (a rule and the exporter disagree)."""


def shown(value):
    """value as a message shows it: JSON's null, else repr, cut short."""
    text = "null" if value is None else repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


def _union(hint):
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def nullable(hint):
    """Whether null reads as a value of hint (X | None, Optional[X])."""
    return _union(hint) and type(None) in typing.get_args(hint)


def describe(hint):
    """The hint as an error message names the expected value."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is type(None):
        return "null"
    if _union(hint):
        return " or ".join(describe(a) for a in args)
    if origin is typing.Literal:
        return "one of " + ", ".join(shown(a) for a in args)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return "one of " + ", ".join(shown(m.value) for m in hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return f"an object ({hint.__name__})"
    if origin in (tuple, list):
        return "a list"
    if hint is dict or origin is dict:
        return "an object"
    return getattr(hint, "__name__", repr(hint))


def _fail(hint, value, path):
    raise ConfigError(f"{path} is {shown(value)}; expected {describe(hint)}")


def _scalar(hint, value, path):
    wanted = (int, float) if hint is float else hint
    if not isinstance(value, wanted) or (hint is not bool and isinstance(value, bool)):
        _fail(hint, value, path)
    return value


def _null(value, path):
    if value is not None:
        _fail(type(None), value, path)


def _choice(hint, choices, value, path):
    # A JSON true is not the choice 1: the type must match as well as the value.
    if not any(value == c and type(value) is type(c) for c in choices):
        _fail(hint, value, path)
    return hint(value) if isinstance(hint, type) else value


def _either(hint, reads, value, path):
    """The first member of a union that reads value. With one member besides null (X | None),
    an error inside the value (a nested field's) keeps its own message, which names its path."""
    if value is None and nullable(hint):
        return None
    members = [read for arg, read in zip(typing.get_args(hint), reads) if arg is not type(None)]
    for read in members:
        try:
            return read(value, path)
        except ConfigError as e:
            if len(members) == 1 and not str(e).startswith(f"{path} is "):
                raise
    _fail(hint, value, path)


def _items(hint, kind, reads, value, path):
    """A list read item by item: kind(...) of tuple[X, ...] and list[X], or a fixed tuple."""
    if not isinstance(value, (list, tuple)) or (len(reads) > 1 and len(value) != len(reads)):
        _fail(hint, value, path)
    items = zip(value, reads) if len(reads) > 1 else ((item, reads[0]) for item in value)
    return kind(read(item, f"{path}[{i}]") for i, (item, read) in enumerate(items))


def _object(hint, read_value, value, path):
    if not isinstance(value, dict):
        _fail(hint, value, path)
    if read_value is None:
        return dict(value)
    return {key: read_value(item, f"{path}[{key!r}]") for key, item in value.items()}


def _sequence_reader(hint, dataclass_reader):
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is list and len(args) == 1:
        return functools.partial(_items, hint, list, [reader(args[0], dataclass_reader)])
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return functools.partial(_items, hint, tuple, [reader(args[0], dataclass_reader)])
    if origin is tuple and args and Ellipsis not in args:
        return functools.partial(_items, hint, tuple, [reader(a, dataclass_reader) for a in args])
    raise TypeError(f"typed_json cannot check {hint!r}: a list needs its items' type")


def _dict_reader(hint, dataclass_reader):
    args = typing.get_args(hint)
    if hint is dict:
        return functools.partial(_object, hint, None)
    if args[0] is not str:  # JSON's keys are strings
        raise TypeError(f"typed_json cannot check {hint!r}: a JSON object's keys are str")
    return functools.partial(_object, hint, reader(args[1], dataclass_reader))


def reader(hint, dataclass_reader):
    """read(value, path) of hint; dataclass_reader(cls) is that of a dataclass. TypeError if
    typed_json cannot check the hint."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in _SCALARS:
        return functools.partial(_scalar, hint)
    if hint is type(None):
        return _null
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return dataclass_reader(hint)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return functools.partial(_choice, hint, tuple(m.value for m in hint))
    if origin is typing.Literal:
        return functools.partial(_choice, hint, args)
    if _union(hint):
        return functools.partial(_either, hint, [reader(a, dataclass_reader) for a in args])
    if origin in (tuple, list) or hint in (tuple, list):
        return _sequence_reader(hint, dataclass_reader)
    if hint is dict or origin is dict:
        return _dict_reader(hint, dataclass_reader)
    raise TypeError(f"typed_json cannot check {hint!r}")
