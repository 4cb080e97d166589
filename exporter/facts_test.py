"""exporter_facts.bzl is what the exporter's Python defines: the registry of actions (command,
mnemonic, worker), each action config's defaults, the modules the test rules run, and the values
the rules accept (dtypes, hints, backends, IRs, quantizers, schemes, kernel libraries, ...)."""

import ast
import importlib
import os

import pytest

from runfiles import Runfiles

from exporter import facts
from exporter.actions import registry

PATH = Runfiles.Create().Rlocation("rules_torch_export/exporter/exporter_facts.bzl")
REPOSITORY_PATH = Runfiles.Create().Rlocation("rules_torch_export/exporter/repository_facts.bzl")
LOCK_PATH = Runfiles.Create().Rlocation("rules_torch_export/exporter/lock_facts.bzl")


def _values():
    with open(PATH, encoding="utf-8") as f:
        tree = ast.parse(f.read())  # the file is Starlark that Python can parse too
    return {node.targets[0].id: ast.literal_eval(node.value)
            for node in tree.body if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}


def test_the_committed_files_are_current():
    for path, name in ((PATH, facts.BZL), (REPOSITORY_PATH, facts.REPOSITORY_BZL), (LOCK_PATH, facts.LOCK_BZL)):
        with open(path, encoding="utf-8") as f:
            committed = f.read()
        assert committed == facts.render(name), f"{name} is stale: bazel run //exporter:update_exporter_facts"


def test_the_repository_rules_load_only_their_own_facts():
    """A repository rule runs again when a .bzl it loads changes: the venv's would reinstall."""
    toolchain = os.path.dirname(Runfiles.Create().Rlocation("rules_torch_export/toolchain/venv_repository.bzl"))
    for name in sorted(os.listdir(toolchain)):
        if name.endswith(".bzl"):
            with open(os.path.join(toolchain, name), encoding="utf-8") as f:
                assert "exporter_facts.bzl" not in f.read(), f"toolchain/{name} loads exporter_facts.bzl"
    with open(REPOSITORY_PATH, encoding="utf-8") as f:
        assert "KERNEL_LIBRARIES = [" in f.read()


def test_the_file_holds_every_action_with_its_mnemonic():
    values = _values()
    assert values["EXPORTER_ACTIONS"]["export"] == {"mnemonic": "TorchExport", "worker": "export", "remote": True}
    assert values["EXPORTER_ACTIONS"]["report"]["remote"] is False  # graphviz is this machine's
    assert values["EXPORTER_ACTIONS"]["etrecord"]["mnemonic"] == "ExecuTorchETRecord"
    assert set(values["EXPORTER_ACTIONS"]) == set(registry.ACTIONS)
    assert values["HINTS"] == ["AUTO", "DYNAMIC", "STATIC"]


def test_quantize_and_etrecord_run_in_the_export_and_lowering_workers():
    actions = _values()["EXPORTER_ACTIONS"]
    workers = {command: a["worker"] for command, a in actions.items() if a["worker"]}
    assert workers == {"export": "export", "quantize": "export", "lower": "lower", "etrecord": "lower",
                       # calibration imports torch as an export does: a warm child saves that
                       "calibrate": "export",
                       # the tests' build actions (numerics values, snapshot texts) in the export's
                       "snapshot_text": "export", "numerics_values": "export"}


def test_an_action_shares_only_a_worker_that_exists():
    for host in ("bundle", "no_such_command"):
        with pytest.raises(ValueError, match="has none of its own"):
            registry.action("shares", "Shares", worker=host)(object)
    assert "shares" not in registry.ACTIONS


def test_the_worker_requirements_are_the_registry_s():
    """Before, exporter/worker_settings.bzl kept them by hand, and its list of who shares a worker drifted."""
    assert _values()["EXPORTER_WORKER_REQUIREMENTS"] == registry.WORKER_REQUIREMENTS


def test_the_backends_facts_are_their_records():
    """The rules read a backend only through its record (exporter/core/backends.py)."""
    from exporter.actions import quantize
    from exporter.core import backends

    values = _values()
    assert values["BACKENDS"] == ["xnnpack", "openvino", "coreml", "tosa", "ethos_u"]
    assert values["BACKEND_RECORDS"]["ethos_u"]["integer_only"] is True
    assert values["BACKEND_RECORDS"]["tosa"]["integer_only"] == {"profile": "INT"}
    assert [n for n, r in values["BACKEND_RECORDS"].items() if r["per_machine"]] == ["openvino"]
    assert set(values["REFERENCE_RUNTIMES"]) == {"tosa_reference", "fvp"}
    for name, schemes in values["QUANTIZER_SCHEMES"].items():  # each a scheme quantize.py knows, its default first
        assert set(schemes) <= set(quantize.SCHEMES) and schemes[0] == "int8_static_per_channel", name
    assert values["QUANTIZER_SCHEMES"]["xnnpack"] == list(quantize.SCHEMES)
    assert set(values["BACKEND_RECORDS"]) == set(backends.BY_NAME)


def test_the_defaults_are_the_configs_own():
    values = _values()["CONFIG_DEFAULTS"]
    assert values["export"]["ir"] == registry.ExportOptions().ir == "training"
    assert values["export"]["group_size"] == 32 and values["lower"]["weights"] == "inline"
    assert values["quantize"] == {"strict": False, "quantizer": "xnnpack", "scheme": "int8_static_per_channel",
                                  "calibration": None, "backend_packages": []}
    assert "label" not in values["export"] and "raw" not in values["lower"]


def test_every_module_the_rules_run_has_a_main():
    for name, module in _values()["EXPORTER_MODULES"].items():
        assert callable(importlib.import_module(module).main), name


def test_only_the_actions_that_draw_a_report_have_its_renderer():
    assert _values()["REPORT_ACTIONS"] == ["report", "dashboard"]
    assert {a.module for a in registry.ACTIONS.values() if a.tools == "reports"} == {
        "exporter.reports.report", "exporter.reports.dashboard"}
