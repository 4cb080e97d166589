"""Every config the exporter decodes (the registry's actions', the checks' contract, and the
classes nested in them) takes the JSON its hints describe and refuses what they do not: a config
field of a type that typed_json cannot check, or whose value it does not check, fails here."""

import dataclasses
import enum
import typing

import pytest

from exporter.actions import registry
from exporter.checks import contract
from exporter.core import typed_json
from exporter.core.typed_json import Config, ConfigError


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


CONFIGS = sorted({c for c in _subclasses(Config) if c.__module__.startswith("exporter.")
                  and not c.__module__.endswith("_test")}, key=lambda c: c.__name__)


def test_the_configs_include_every_action_and_check():
    checks = [c for c in vars(contract).values() if isinstance(c, type) and issubclass(c, contract.CheckConfig)]
    assert {a.config for a in registry.ACTIONS.values()} | set(checks) <= set(CONFIGS)
    assert len(checks) >= 7 and registry.ETRecordConfig in CONFIGS


def _args(hint):
    return [a for a in typing.get_args(hint) if a is not type(None)]


def _sample(hint):
    """A JSON value that hint takes (not its default)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    scalars = {str: "/s", int: 2, float: 0.5, bool: True}  # "/s": import roots are made absolute
    if hint in scalars:
        return scalars[hint]
    if origin is typing.Literal:
        return args[-1]
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return list(hint)[-1].value
    if dataclasses.is_dataclass(hint):
        return _sample_object(hint)
    if typed_json.nullable(hint) or origin in (typing.Union, type(int | str)):
        return _sample(_args(hint)[0])
    if origin in (tuple, list):
        return [_sample(a) for a in args if a is not Ellipsis]
    return {"k": _sample(args[1])} if args else {"k": [1]}


def _wrong(hint):
    """A JSON value that hint refuses, as deep inside it as it goes."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if typed_json.nullable(hint) and len(_args(hint)) == 1:
        return _wrong(_args(hint)[0])
    if origin is typing.Literal or (isinstance(hint, type) and issubclass(hint, enum.Enum)):
        return "zzz"
    if origin in (tuple, list):
        return [_wrong(args[0])]
    if origin is dict:
        return {"k": _wrong(args[1])}
    return 12345 if hint is str else "zzz"


def _fields(cls):
    """(field, hint, kind) of cls's init fields; kind: "own" key, "inline" dataclass, "raw" dict."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        keys = f.metadata.get(typed_json._KEYS)
        if f.init and keys is typed_json._INLINE:
            yield f, hints[f.name], "inline" if dataclasses.is_dataclass(hints[f.name]) else "raw"
        elif f.init:
            assert keys is None or f.name in keys, f"{cls.__name__}.{f.name}'s reader must take its own key"
            yield f, hints[f.name], "own"


def _sample_object(cls, required_only=False):
    data = {}
    for f, hint, kind in _fields(cls):
        if kind == "inline":
            data.update(_sample_object(hint, required_only))
        elif kind == "own" and not (required_only and _has_default(f)):
            data[f.name] = _sample(hint)
    return data


def _has_default(f):
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


def _plain(value):
    """A decoded value as its JSON: dataclasses as objects (inline ones merged), tuples as lists."""
    if dataclasses.is_dataclass(value):
        data = {}
        for f, _, kind in _fields(type(value)):
            if kind == "inline":
                data.update(_plain(getattr(value, f.name)))
            elif kind == "own":
                data[f.name] = _plain(getattr(value, f.name))
        return data
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value.value if isinstance(value, enum.Enum) else value


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_a_config_reads_every_field_back_and_takes_the_defaults(cls):
    full = _sample_object(cls)
    assert _plain(cls.from_json(full)) == full
    least = cls.from_json(_sample_object(cls, required_only=True))
    # The omitted fields are what the constructor gives them (a __post_init__ may change one).
    given = {f.name: getattr(least, f.name) for f in dataclasses.fields(cls) if f.init and not _has_default(f)}
    assert least == cls(**given)
    # Each default, written out as a rule may write it (exporter_facts.bzl), fits its own hint.
    defaults = {f.name: _plain(getattr(least, f.name)) for f, _, kind in _fields(cls) if kind == "own" and _has_default(f)}
    assert _plain(cls.from_json(dict(_sample_object(cls, required_only=True), **defaults))) == _plain(least)
    if defaults:
        assert _plain(cls.from_json(full)) != _plain(least)  # the samples are not the defaults


def _own_keys(cls):
    for f, hint, kind in _fields(cls):
        if kind == "inline":
            yield from _own_keys(hint)
        elif kind == "own":
            yield f.name, hint


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_a_config_refuses_a_wrong_value_of_each_field_and_an_unknown_key(cls):
    for key, hint in _own_keys(cls):
        with pytest.raises(ConfigError, match=rf"^{cls.__name__}\.{key}[ .\[]"):
            cls.from_json(dict(_sample_object(cls), **{key: _wrong(hint)}))
    with pytest.raises(ConfigError, match=rf"^{cls.__name__} has no key 'zz_unknown'; it takes "):
        cls.from_json(dict(_sample_object(cls), zz_unknown=1))


def _own_fields(cls):
    return {f.name for f in dataclasses.fields(cls) if f.name in vars(cls).get("__annotations__", {})}


def test_a_numerics_test_and_its_build_action_read_the_cases_from_one_schema():
    """The fields that decide a numerics_test's values are declared once (registry.NumericsCases),
    and each config adds only its own: before, both declared the same seventeen, and drifted."""
    shared = {f.name for f in dataclasses.fields(registry.NumericsCases)}
    for cls, base in ((registry.NumericsValuesConfig, registry.ActionConfig), (contract.NumericsConfig, contract.CheckConfig)):
        assert issubclass(cls, registry.NumericsCases) and issubclass(cls, base), cls.__name__
        assert not _own_fields(cls) & shared, f"{cls.__name__} declares again {sorted(_own_fields(cls) & shared)}"
    # The two differ only where the forms differ: the model and each method's program as each reads them.
    assert _own_fields(registry.NumericsValuesConfig) == {"model", "method_programs"}
