"""The typed decoder: each kind of hint, defaults, inline fields, and the errors of a config that
does not have its class's shape."""

import dataclasses

import pytest

from exporter.core.typed_json import Config, ConfigError, field, inline


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
    pair: tuple[int, ...] = field(read=lambda data: (data.get("a", 0), data.get("b", 0)), default=())


def test_every_kind_of_hint_reads_its_json():
    data = {"label": "//a", "ratio": 2, "flags": [True, False], "inners": {"x": {"name": "x", "size": 3}},
            "first": {"name": "f"}, "anything": {"k": [1]}, "name": "top", "a": 4, "b": 5, "extra": 1}
    outer = Outer.from_json(data)
    assert outer.ratio == 2 and outer.flags == (True, False)
    assert outer.inners == {"x": Inner("x", 3)} and outer.first == Inner("f", 1)
    assert outer.anything == {"k": [1]} and outer.options == Inner("top", 1)
    assert outer.raw == data and outer.raw is not data and outer.pair == (4, 5)


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
])
def test_a_config_of_the_wrong_shape_names_the_field(data, message):
    with pytest.raises(ConfigError, match=message):
        Outer.from_json(data)
