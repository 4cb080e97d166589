"""Arm's programs of tests/backends (docs/backends.md, "Arm"): each has its backend's delegate, as
the manifest and pte_inspect say, records its options and the Arm packages' versions, and has the
same bytes in two lowerings."""

import hashlib
import json
import re

import pytest

from exporter.formats import pte_inspect

PACKAGE = "tests/backends/"
# program -> (its backend, the id of its delegates, its options with the defaults filled in).
PROGRAMS = {
    "conv_linear_tosa": ("tosa", "TOSABackend", {"profile": "FP"}),
    "conv_linear_tosa_int": ("tosa", "TOSABackend", {"profile": "INT"}),
    "conv_linear_ethos_u": ("ethos_u", "EthosUBackend",
                            {"target": "ethos-u55-128", "system_config": "default", "memory_mode": "default"}),
}


def _json(path):
    with open(PACKAGE + path, encoding="utf-8") as f:
        return json.load(f)


def _sha256(path):
    with open(PACKAGE + path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _pins():
    with open("toolchain/backends/arm.lock", encoding="utf-8") as f:
        return dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", f.read(), re.M))


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_the_whole_model_is_one_arm_delegate(program):
    backend, delegate_id, _ = PROGRAMS[program]
    manifest = _json(program + ".pte.json")
    assert manifest["backends"] == [backend]
    forward = manifest["methods"]["forward"]
    assert list(forward["delegates"]) == [delegate_id]
    assert forward["delegates"][delegate_id]["count"] == 1
    assert forward["delegates"][delegate_id]["bytes"] > 1000  # the weights are in the blob


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_pte_inspect_names_the_arm_delegate(program, capsys):
    _, delegate_id, _ = PROGRAMS[program]
    assert pte_inspect.main([f"{PACKAGE}{program}.pte"]) == 0
    text = capsys.readouterr().out
    found = _json(program + ".pte.json")["methods"]["forward"]["delegates"][delegate_id]
    assert f"delegates by backend: {delegate_id}\n" in text
    assert f"  {delegate_id}: 1 blob, {pte_inspect.fmt_bytes(found['bytes'])}, in forward\n" in text


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_the_manifest_records_the_options_and_arm_s_packages(program):
    backend, _, options = PROGRAMS[program]
    pins = _pins()
    record = _json(program + ".pte.json")["backend_packages"]
    assert list(record) == [backend]
    assert record[backend]["options"] == options
    wanted = {"tosa": ("tosa-tools",), "ethos_u": ("tosa-tools", "ethos-u-vela")}[backend]
    assert record[backend]["packages"] == {name: pins[name] for name in wanted}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_two_lowerings_give_the_same_bytes(program):
    first, again = _json(program + ".pte.json"), _json(program + "_again.pte.json")
    assert _sha256(program + ".pte") == _sha256(program + "_again.pte") == first["pte"]["sha256"]
    assert first["label"] != again["label"]  # two actions, not one output read twice
