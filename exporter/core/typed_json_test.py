"""The typed decoder: each kind of hint, defaults, inline fields, the one-line errors of a config
that does not have its class's shape or carries a key no field takes, and the hints it refuses
to take at all."""

import dataclasses
import enum
import typing

import pytest

from exporter.core.typed_json import Config, ConfigError, check, decode, field, inline


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass(frozen=True)
class Inner(Config):
    name: str
    size: int = 1


@dataclasses.dataclass(frozen=True)
class Outer(Config):
    label: str
    ratio: float | None = None
    flags: tuple[bool, ...] = ()
    inners: dict[str, Inner] = dataclasses.field(default_factory=dict)
    first: Inner | None = None
    anything: dict = dataclasses.field(default_factory=dict)
    options: Inner = inline(default=None)
    raw: dict = inline(default=None)
    pair: tuple[int, ...] = field(read=lambda data: (data.get("a", 0), data.get("b", 0)), keys=("a", "b"), default=())


@dataclasses.dataclass(frozen=True)
class Hints(Config):
    """One field of each hint beyond Outer's."""

    count: typing.Optional[int] = None  # noqa: UP045 (the spelling under test)
    sizes: list[int] = dataclasses.field(default_factory=list)
    mode: typing.Literal["fast", "exact"] = "fast"
    color: Color = Color.RED
    either: int | str = 0
    point: tuple[int, str] = (0, "")
    table: dict[str, tuple[float, ...]] = dataclasses.field(default_factory=dict)
    union: typing.Union[Inner, None] = None  # noqa: UP007


def test_every_kind_of_hint_reads_its_json():
    data = {"label": "//a", "ratio": 2, "flags": [True, False], "inners": {"x": {"name": "x", "size": 3}},
            "first": {"name": "f"}, "anything": {"k": [1]}, "name": "top", "a": 4, "b": 5}
    outer = Outer.from_json(data)
    assert outer.ratio == 2 and outer.flags == (True, False)
    assert outer.inners == {"x": Inner("x", 3)} and outer.first == Inner("f", 1)
    assert outer.anything == {"k": [1]} and outer.options == Inner("top", 1)
    assert outer.raw == data and outer.raw is not data and outer.pair == (4, 5)


def test_the_hints_beyond_the_basic_ones_read_their_json():
    hints = Hints.from_json({"count": 3, "sizes": [1, 2], "mode": "exact", "color": "blue", "either": "s",
                             "point": [1, "p"], "table": {"t": [1, 0.5]}, "union": {"name": "u"}})
    assert (hints.count, hints.sizes, hints.mode, hints.color) == (3, [1, 2], "exact", Color.BLUE)
    assert (hints.either, hints.point, hints.table, hints.union) == ("s", (1, "p"), {"t": (1, 0.5)}, Inner("u"))
    assert Hints.from_json({"either": 7, "count": None}) == Hints(either=7)


def test_missing_keys_and_nulls_take_the_defaults():
    outer = Outer.from_json({"label": "//a", "ratio": None, "flags": None, "name": "n"})
    assert (outer.ratio, outer.flags, outer.inners, outer.first) == (None, (), {}, None)


@pytest.mark.parametrize("data, message", [
    ({"name": "n"}, "Outer has no label"),
    ({"label": 3, "name": "n"}, "Outer.label is 3; expected str"),
    ({"label": "//a", "name": "n", "flags": [1]}, r"Outer.flags\[0\] is 1; expected bool"),
    ({"label": "//a", "name": "n", "inners": {"x": {"size": 2}}}, r"Outer.inners\['x'\] has no name"),
    ({"label": "//a", "name": "n", "first": {"name": "f", "size": True}}, "Outer.first.size is True; expected int"),
    ({"label": "//a", "name": "n", "flags": "yes"}, "Outer.flags is 'yes'; expected a list"),
    ({"label": "//a", "name": "n", "size": "big"}, "Outer.size is 'big'; expected int"),  # an inline field's key
    ({"label": "//a", "name": "n", "a": "4"}, r"Outer.pair\[0\] is '4'; expected int"),
])
def test_a_config_of_the_wrong_shape_names_the_field(data, message):
    with pytest.raises(ConfigError, match=f"^{message}$"):
        Outer.from_json(data)


@pytest.mark.parametrize("data, message", [
    ({"count": "not an int"}, "Hints.count is 'not an int'; expected int or null"),
    ({"count": 1.5}, "Hints.count is 1.5; expected int or null"),
    ({"sizes": ["s"]}, r"Hints.sizes\[0\] is 's'; expected int"),
    ({"sizes": {"a": 1}}, r"Hints.sizes is \{'a': 1\}; expected a list"),
    ({"mode": "zzz"}, "Hints.mode is 'zzz'; expected one of 'fast', 'exact'"),
    ({"color": "green"}, "Hints.color is 'green'; expected one of 'red', 'blue'"),
    ({"either": [1]}, r"Hints.either is \[1\]; expected int or str"),
    ({"point": [1]}, r"Hints.point is \[1\]; expected a list"),
    ({"point": [1, 2]}, r"Hints.point\[1\] is 2; expected str"),
    ({"table": {"t": ["x"]}}, r"Hints.table\['t'\]\[0\] is 'x'; expected float"),
    ({"union": {"name": 1}}, "Hints.union.name is 1; expected str"),
    ({"union": "u"}, r"Hints.union is 'u'; expected an object \(Inner\) or null"),
])
def test_a_value_that_does_not_fit_its_hint_is_refused_in_one_line(data, message):
    with pytest.raises(ConfigError, match=f"^{message}$"):
        Hints.from_json(data)


@pytest.mark.parametrize("data, message", [
    ({"label": "//a", "name": "n", "ratoi": 2},
     "Outer has no key 'ratoi' (did you mean 'ratio'?); it takes ratio, a, anything, b, first, flags, inners, "
     "label, name, size"),
    ({"label": "//a", "name": "n", "first": {"name": "f", "szie": 2}},
     "Outer.first has no key 'szie' (did you mean 'size'?); it takes size, name"),
    ({"label": "//a", "name": "n", "zzz": 1},
     "Outer has no key 'zzz'; it takes a, anything, b, first, flags, inners, label, name, ratio, size"),
])
def test_a_key_that_no_field_takes_is_refused_naming_the_closest(data, message):
    with pytest.raises(ConfigError) as refused:
        Outer.from_json(data)
    assert str(refused.value) == message


def test_an_inline_dataclass_alone_refuses_its_owners_keys():
    with pytest.raises(ConfigError, match="^Inner has no key 'label'"):
        Inner.from_json({"name": "n", "label": "//a"})


class Opaque:
    pass


@pytest.mark.parametrize("hint, message", [
    (typing.Any, "typed_json cannot check typing.Any"),
    (list, "a list needs its items' type"),
    (tuple, "a list needs its items' type"),
    (dict[int, str], "a JSON object's keys are str"),
    (Opaque, "typed_json cannot check <class"),
    (int | Opaque, "typed_json cannot check <class"),
    (dict[str, list], "a list needs its items' type"),
])
def test_a_hint_the_decoder_cannot_check_is_refused_before_any_json(hint, message):
    cls = dataclasses.make_dataclass("Bad", [("value", hint)], bases=(Config,), frozen=True)
    with pytest.raises(TypeError, match=f"^Bad.value: .*{message}"):
        check(cls)
    with pytest.raises(TypeError, match="^Bad.value: "):
        decode(cls, {"value": 1})


def test_a_nested_dataclass_is_checked_with_its_owner():
    inner = dataclasses.make_dataclass("BadInner", [("value", typing.Any)], bases=(Config,), frozen=True)
    outer = dataclasses.make_dataclass("Owner", [("inner", inner | None, None)], bases=(Config,), frozen=True)
    with pytest.raises(TypeError, match="^Owner.inner: BadInner.value: typed_json cannot check typing.Any$"):
        check(outer)


def test_inline_takes_only_a_dataclass_or_a_bare_dict():
    cls = dataclasses.make_dataclass("BadInline", [("value", str, inline())], bases=(Config,), frozen=True)
    with pytest.raises(TypeError, match="^BadInline.value: inline.. takes a dataclass or a bare dict, not str$"):
        check(cls)
