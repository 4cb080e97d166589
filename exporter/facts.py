"""exporter_facts.bzl: what the exporter's Python defines that the rules use, as Starlark the rules
load: the registry of actions, every action config's defaults, the modules the test rules run,
and the values the rules accept. Facts flow one way, from here to the rules.

    bazel run //exporter:update_exporter_facts     rewrites exporter/exporter_facts.bzl
    //exporter:facts_test                           fails while the file is not current

This tool is no part of the toolchain's sources (//exporter:exporter_srcs), so it alone in
exporter/ may read the checks (imports_test).
"""

import dataclasses
import json
import os
import sys
import typing

BZL = "exporter/exporter_facts.bzl"

# The facts toolchain/'s .bzl files load, in a file of their own: Bazel runs a repository rule
# again (for the venv: a pip install of minutes) whenever a .bzl file it loads changes, so the
# toolchain must not load exporter_facts.bzl, which changes with every new action or value.
REPOSITORY_BZL = "exporter/repository_facts.bzl"
REPOSITORY_FACTS = ("KERNEL_LIBRARIES", "DEFAULT_DEADLINE_SECONDS")


def _json_value(value):
    return list(value) if isinstance(value, tuple) else value


def defaults(config_class):
    """{field: default} of a config class, its inline options' fields included; the fields
    every action's config has (label, identity, outputs, raw) are the rules' own business."""
    from exporter.actions import registry

    found = {}
    common = {f.name for f in dataclasses.fields(registry.ActionConfig)}
    for f in dataclasses.fields(config_class):
        if f.name in common:
            continue
        if dataclasses.is_dataclass(f.type) and f.metadata:  # read inline: its fields sit beside ours
            found.update(defaults(f.type))
        elif f.default is not dataclasses.MISSING:
            found[f.name] = _json_value(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            found[f.name] = _json_value(f.default_factory())
    return found


def allowed(config_class, field_name):
    """The values a config field's Literal hint allows, in the hint's order (the first is no
    default; the field's own default says that)."""
    hint = typing.get_type_hints(config_class)[field_name]
    assert typing.get_origin(hint) is typing.Literal, f"{config_class.__name__}.{field_name}: {hint}"
    return list(typing.get_args(hint))


def facts():
    """{Starlark name: value} of everything the rules take from the exporter."""
    from exporter.actions import eager_quantize, quantize, registry, tokenizer
    from exporter.checks import contract
    from exporter.core import backends, determinism, dtypes, hf_models, kernels, lora, shape_spec
    from exporter.driver import request

    return {
        # command -> the Bazel mnemonic its rule gives the action, whether the rule offers the
        # persistent worker, and whether a remote executor may run it (actions/registry.py, @action).
        "EXPORTER_ACTIONS": {
            command: {"mnemonic": a.mnemonic, "worker": a.worker, "remote": a.remote}
            for command, a in registry.ACTIONS.items()
        },
        # What an action that runs in the persistent worker asks of Bazel (the toolchain's worker_requirements).
        "EXPORTER_WORKER_REQUIREMENTS": registry.WORKER_REQUIREMENTS,
        # The commands that draw a report: their tools add the reports' renderer (//exporter:report_srcs).
        "REPORT_ACTIONS": [command for command, a in registry.ACTIONS.items() if a.tools == "reports"],
        # command -> {config field: its default} (actions/registry.py): the rules' defaults.
        "CONFIG_DEFAULTS": {command: defaults(a.config) for command, a in registry.ACTIONS.items()},
        # name -> the exporter module a test rule or tool runs (checks/contract.py).
        "EXPORTER_MODULES": contract.MODULES,
        "SHAPE_SPEC_DTYPES": list(dtypes.SHAPE_SPEC),
        "HINTS": list(shape_spec.HINTS),
        "MAX_SPEC_VALUES": shape_spec.MAX_VALUES,
        "BACKENDS": list(backends.BACKENDS),
        # backend -> {option: allowed values, the default first} (core/backends.py).
        "BACKEND_OPTIONS": {b: {o: list(v) for o, v in options.items()} for b, options in backends.OPTIONS.items()},
        # backend -> the numerics_test runtimes its programs run in here.
        "BACKEND_RUNTIMES": {b: list(r) for b, r in backends.RUNTIMES.items()},
        # backend -> the repository of its packages, from a lock of its own, fetched only when named.
        "BACKENDS_WITH_LOCK": backends.OWN_LOCK,
        # The values of config fields with a Literal hint, which the rules check at analysis.
        "IRS": allowed(registry.ExportOptions, "ir"),
        "EAGER_QUANTIZE_SCHEMES": list(eager_quantize.SCHEMES),
        "QUANTIZERS": list(quantize.QUANTIZERS),
        # quantizer -> the schemes it takes, its default first.
        "QUANTIZER_SCHEMES": {q: list(s) for q, s in quantize.QUANTIZER_SCHEMES.items()},
        "SCHEMES": {name: needs_calibration for name, (_, needs_calibration) in quantize.SCHEMES.items()},
        "WEIGHTS": allowed(registry.LowerConfig, "weights"),
        "KERNEL_LIBRARIES": list(kernels.BUILTIN),
        "TOKENIZER_FORMATS": list(tokenizer.LOADERS),
        "BUNDLED_REFERENCES": allowed(registry.BundledProgramConfig, "reference"),
        "NUMERICS_REFERENCES": allowed(contract.NumericsConfig, "reference"),
        "REPRODUCIBLE_MATH_ENV": determinism.REPRODUCIBLE_MATH_ENV,
        # hf_model's tasks -> the kind of inputs its shape spec is derived from, and its entry.
        "HF_TASKS": {task: kind for task, (_, kind) in hf_models.TASKS.items()},
        "HF_MODEL_ENTRY": registry.HF_MODEL_ENTRY,
        # The file of a PEFT folder that holds the adapter's factors (lora_model's checkpoint_dir).
        "PEFT_WEIGHTS": lora.PEFT_WEIGHTS,
        # An exporter action's deadline when no flag or target sets one (toolchain/deadline.bzl).
        "DEFAULT_DEADLINE_SECONDS": request.DEFAULT_DEADLINE_SECONDS,
    }


def _starlark(value, indent=""):
    """value as buildifier formats it (JSON's literals, True/False/None)."""
    inner = indent + "    "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {_starlark(v, inner)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list):
        if not value:
            return "[]"
        items = [f"{inner}{_starlark(v, inner)}," for v in value]
        return "[\n" + "\n".join(items) + f"\n{indent}]"
    if isinstance(value, bool):
        return "True" if value else "False"
    if value is None:
        return "None"
    return json.dumps(value)


def render(path=BZL):
    """The text of exporter_facts.bzl, or of repository_facts.bzl (REPOSITORY_FACTS only)."""
    what = "the toolchain's repository rules" if path == REPOSITORY_BZL else "the rules"
    lines = [
        f'"""What the exporter\'s Python defines that {what} use (generated from',
        "exporter/facts.py by `bazel run //exporter:update_exporter_facts`; do not edit by hand;",
        '//exporter:facts_test checks that it is current)."""',
    ]
    for name, value in facts().items():
        if (name in REPOSITORY_FACTS) == (path == REPOSITORY_BZL):
            lines += ["", f"{name} = {_starlark(value)}"]
    return "\n".join(lines) + "\n"


def main(argv):
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    if not workspace:
        print("facts.py writes into the source tree; run it with `bazel run //exporter:update_exporter_facts`",
              file=sys.stderr)
        return 2
    for path in (BZL, REPOSITORY_BZL):
        with open(os.path.join(workspace, path), "w", encoding="utf-8") as f:
            f.write(render(path))
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main(sys.argv[1:]))
