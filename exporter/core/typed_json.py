"""Configs that decode themselves: the JSON a rule writes, read into a frozen dataclass by the
dataclass's type hints (ExecuTorch's exir/_serialize/_dataclass.py reads its schema the same way).

A field's type says how its JSON value reads:

    str, int, bool        as is, checked; float also takes an int
    X | None, Optional[X] null is None; Union[X, Y] / X | Y takes the first that fits
    Literal[a, b], Enum   one of those values (an Enum's member by its value)
    tuple[X, ...], list[X]   a list, each item read as X; tuple[X, Y] a list of exactly two
    dict[str, X]          an object, each value read as X; a bare dict takes any object
    a dataclass           an object, read by these same rules

Any other hint (Any, a bare list, a class of its own) is refused when the class is first used
(and when the registry registers an action's config), so that a new field of a type the decoder
cannot check fails in its own tests, not in a user's build.

A missing key, or null, takes the field's default; a field without one must be given (an
optional field's default is None). A key that no field takes is refused, so that a misspelled
key fails instead of taking the default. Where a field's value comes from other than its own
key, `field(read=..., keys=...)` says: `inline()` reads the whole enclosing object (options kept
at the top level, whose keys the enclosing object then takes, and every action's `raw`, the JSON
its manifest digests).

Every config subclasses Config, whose from_json is this decoder.
"""

import dataclasses
import difflib
import functools
import typing

from exporter.core.typed_json_hints import ConfigError, describe, nullable, reader, shown

__all__ = ["Config", "ConfigError", "check", "decode", "field", "inline", "nullable"]

_READ = "typed_json.read"  # the dataclass field metadata key of field(read=...)
_KEYS = "typed_json.keys"  # ... and of the keys that read takes from the enclosing object
_INLINE = object()  # keys of an inline field: its dataclass's own


def _itself(data):
    return data


def field(read=None, keys=None, **kwargs):
    """A dataclass field whose JSON value is read(enclosing object) instead of its own key;
    keys are the enclosing object's keys that read takes (default: the field's name)."""
    return dataclasses.field(metadata={_READ: read, _KEYS: keys} if read else {}, **kwargs)


def inline(**kwargs):
    """A field read from the enclosing object itself: a dataclass whose keys sit beside the
    config's own, or a bare dict that keeps the whole JSON (and takes no key of its own)."""
    return field(read=_itself, keys=_INLINE, **kwargs)


@dataclasses.dataclass(frozen=True)
class _Field:
    name: str
    take: typing.Callable | None  # field(read=...)'s reader, or None for the field's own key
    read: typing.Callable  # read(value, path)
    inline: bool
    has_default: bool
    nullable: bool


def _dataclass_reader(cls):
    _plan(cls)  # its hints are checked now, with its owner's
    return functools.partial(decode, cls)


def _inline_reader(hint):
    """(read, keys) of an inline field: a dataclass reads the enclosing object beside its
    owner's keys; a bare dict keeps all of it and takes none."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return functools.partial(decode, hint, strict=False), _plan(hint)[1]
    if hint is dict:
        return reader(dict, _dataclass_reader), frozenset()
    raise TypeError(f"inline() takes a dataclass or a bare dict, not {describe(hint)}")


def _field(f, hint):
    """(_Field, the JSON keys it takes) of one init field; TypeError for a hint it cannot check."""
    keys = f.metadata.get(_KEYS)
    if keys is _INLINE:
        read, keys = _inline_reader(hint)
    else:
        read = reader(hint, _dataclass_reader)
    has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    entry = _Field(f.name, f.metadata.get(_READ), read, f.metadata.get(_KEYS) is _INLINE, has_default, nullable(hint))
    return entry, frozenset((f.name,) if keys is None else keys)


@functools.cache
def _plan(cls):
    """(fields, keys) of a dataclass: each init field's reader, and the JSON keys it takes."""
    hints = typing.get_type_hints(cls)
    fields, keys = [], set()
    for f in dataclasses.fields(cls):
        if f.init:
            try:
                entry, taken = _field(f, hints[f.name])
            except TypeError as e:
                raise TypeError(f"{cls.__name__}.{f.name}: {e}") from None
            fields.append(entry)
            keys |= taken
    return tuple(fields), frozenset(keys)


def check(cls):
    """cls itself, after checking that the decoder can check every hint of it (TypeError if not)."""
    _plan(cls)
    return cls


def _refuse_unknown(data, keys, path):
    unknown = sorted(k for k in data if k not in keys)
    if not unknown:
        return
    close = difflib.get_close_matches(unknown[0], sorted(keys), n=3)
    allowed = close + sorted(k for k in keys if k not in close)
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigError(f"{path} has no key {shown(unknown[0])}{guess}; it takes {', '.join(allowed)}")


def decode(cls, data, path=None, strict=True):
    """An instance of the dataclass `cls` from the JSON object `data`; strict refuses the keys
    that no field takes (an inline dataclass is read from an object with its owner's keys too)."""
    path = path or cls.__name__
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is {shown(data)}; expected an object")
    fields, keys = _plan(cls)
    if strict:
        _refuse_unknown(data, keys, path)
    values = {}
    for f in fields:
        value = f.take(data) if f.take else data.get(f.name)
        if value is None and f.has_default:
            continue
        if value is None and not f.nullable:
            raise ConfigError(f"{path} has no {f.name}")
        values[f.name] = f.read(value, path if f.inline else f"{path}.{f.name}")
    return cls(**values)


@dataclasses.dataclass(frozen=True)
class Config:
    """The base of every config: from_json decodes one by its type hints."""

    @classmethod
    def from_json(cls, data):
        return decode(cls, data)
