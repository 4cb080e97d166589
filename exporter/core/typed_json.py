"""Configs that decode themselves: the JSON a rule writes, read into a frozen dataclass by the
dataclass's type hints (ExecuTorch's exir/_serialize/_dataclass.py reads its schema the same way).

A field's type says how its JSON value reads:

    str, int, bool        as is, checked; float also takes an int
    X | None              null is None
    tuple[X, ...]         a list, each item read as X
    dict[str, X]          an object, each value read as X; a bare dict takes any object
    a dataclass           an object, read by these same rules

A missing key, or null, takes the field's default; a field without one must be given (an
optional field's default is None). Keys that no field names are ignored: a config may carry
keys that only its manifest's "settings" digest reads. Where a field's value comes from other
than its own key, `field(read=...)` says: `inline()` reads the whole enclosing object (options
kept at the top level, and every action's `raw`, the JSON its manifest digests).

Every config subclasses Config, whose from_json is this decoder.
"""

import dataclasses
import types
import typing

_READ = "typed_json.read"  # the dataclass field metadata key of field(read=...)


def _itself(data):
    return data


def field(read=None, **kwargs):
    """A dataclass field whose JSON value is read(enclosing object) instead of its own key."""
    return dataclasses.field(metadata={_READ: read} if read else {}, **kwargs)


def inline(**kwargs):
    """A field read from the enclosing object itself: a dataclass whose keys sit beside the
    config's own, or a bare dict that keeps the whole JSON."""
    return field(read=_itself, **kwargs)


class ConfigError(ValueError):
    """A config that does not have the shape of its class (a rule and the exporter disagree)."""


def _optional(hint):
    return isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint)


def _has_default(f):
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


def _scalar(hint, value, path):
    wanted = (int, float) if hint is float else hint
    if not isinstance(value, wanted) or (hint is not bool and isinstance(value, bool)):
        raise ConfigError(f"{path} is {value!r}; expected {hint.__name__}")
    return value


def read(hint, value, path):
    """The JSON value `value` as the type `hint`; `path` names it in errors."""
    if value is None:
        if _optional(hint) or hint is typing.Any:
            return None
        raise ConfigError(f"{path} is null; expected {hint}")
    if _optional(hint):
        (hint,) = [h for h in typing.get_args(hint) if h is not type(None)]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return decode(hint, value, path)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{path} is {value!r}; expected a list")
        return tuple(read(args[0], item, f"{path}[{i}]") for i, item in enumerate(value))
    if hint is dict or origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{path} is {value!r}; expected an object")
        if not args:
            return dict(value)
        return {key: read(args[1], item, f"{path}[{key!r}]") for key, item in value.items()}
    if hint in (str, int, float, bool):
        return _scalar(hint, value, path)
    return value  # typing.Any


def decode(cls, data, path=None):
    """An instance of the dataclass `cls` from the JSON object `data`."""
    path = path or cls.__name__
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is {data!r}; expected an object")
    hints = typing.get_type_hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        reader = f.metadata.get(_READ)
        value = reader(data) if reader else data.get(f.name)
        if value is None and _has_default(f):
            continue
        if value is None and not _optional(hints[f.name]):
            raise ConfigError(f"{path} has no {f.name}")
        values[f.name] = read(hints[f.name], value, f"{path}.{f.name}")
    return cls(**values)


@dataclasses.dataclass(frozen=True)
class Config:
    """The base of every config: from_json decodes one by its type hints."""

    @classmethod
    def from_json(cls, data):
        return decode(cls, data)
