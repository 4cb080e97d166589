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

# The facts toolchain/'s .bzl files load, in files of their own: Bazel runs a repository rule
# again (for the venv: a pip install of minutes) whenever a .bzl file it loads changes, so the
# toolchain must not load exporter_facts.bzl, which changes with every new action or value.
# repository_facts.bzl is loaded by the venv's repository rule; lock_facts.bzl only by the
# WORKSPACE macro that declares the layered locks' repositories (toolchain/repositories.bzl), so a
# backend with a new lock reinstalls no venv.
REPOSITORY_BZL = "exporter/repository_facts.bzl"
LOCK_BZL = "exporter/lock_facts.bzl"
# {file: (who loads it, the facts it holds)}; exporter_facts.bzl holds every other fact.
OWN_FILES = {
    REPOSITORY_BZL: ("the toolchain's repository rules", ("KERNEL_LIBRARIES", "DEFAULT_DEADLINE_SECONDS")),
    LOCK_BZL: ("the toolchain's WORKSPACE macros", ("BACKEND_LOCKS", "PER_MACHINE_LOCKS", "RELEASE_LOCKS", "RUNTIME_LOCKS",
                                                    "ARM64_BINDING_LOCKS")),
}
REPOSITORY_FACTS = OWN_FILES[REPOSITORY_BZL][1]


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


def backend_facts(record):
    """The fields of a backend's record that the rules read, as Starlark values."""
    quantizer = record.quantizer
    return {
        "title": record.title,
        "delegate_id": record.delegate_id,
        "lock": record.lock,
        "runtimes": list(record.runtimes),
        "reference_runtimes": [r.name for r in record.reference_runtimes],
        "runs_on": list(record.runs_on) if record.runs_on else None,
        "per_machine": record.per_machine,
        "weights_in_blob": record.weights_in_blob,
        "static_shapes": record.static_shapes,
        "integer_only": record.integer_only,
        "quantizer": {"binds": quantizer.binds} if quantizer else None,
        "outputs": dict(sorted(record.outputs.items())),
        "structure_check": record.structure_check is not None,
        "vela_figures": record.vela_figures,
    }


def backend_tables():
    """The facts of the backends' records (core/backends.py) that the rules and the toolchain read."""
    from exporter.core import backends

    return {
        "BACKENDS": list(backends.BACKENDS),
        # backend -> {option: allowed values, the default first} (core/backends.py).
        "BACKEND_OPTIONS": {b: {o: list(v) for o, v in options.items()} for b, options in backends.OPTIONS.items()},
        # backend -> what the rules read of its record (core/backends.py's Backend says each field).
        "BACKEND_RECORDS": {name: backend_facts(record) for name, record in backends.BY_NAME.items()},
        # runtime -> a reference runtime of a backend: its title, what it runs, whether a team's
        # runner (numerics_test's <runtime>_runner) reaches it, and the program's files it reads.
        "REFERENCE_RUNTIMES": {name: {"title": r.title, "runs": r.runs, "team_runner": r.runner is None,
                                      "program_files": list(r.program_files)}
                               for name, r in backends.REFERENCE_RUNTIMES.items()},
        # The runtimes of ExecuTorch itself, which run a program of the portable kernels alone.
        "PORTABLE_RUNTIMES": list(backends.PORTABLE_RUNTIMES),
        # The backends with a quantizer of their own (torch_quantize's quantizer names the backend).
        "QUANTIZERS": [name for name, r in backends.BY_NAME.items() if r.quantizer],
        # quantizer -> the schemes it takes, its default first.
        "QUANTIZER_SCHEMES": {name: list(r.quantizer.schemes) for name, r in backends.BY_NAME.items() if r.quantizer},
        # lock -> the backends whose packages it pins (toolchain/backends/<lock>.lock), each a
        # repository fetched only when a target names one of them (toolchain/layered_locks.bzl).
        "BACKEND_LOCKS": {lock: [name for name, r in backends.BY_NAME.items() if r.lock == lock]
                          for lock in sorted({r.lock for r in backends.BY_NAME.values() if r.lock})},
        # The locks of a backend whose compiled code is for the CPU that lowered it: their identity
        # names the CPU's features; the other locks' identity does not, so their keys match across machines.
        "PER_MACHINE_LOCKS": sorted({r.lock for r in backends.BY_NAME.values() if r.lock and r.per_machine}),
    }


def release_tables():
    """The facts of the ExecuTorch releases' records (core/releases.py) that the rules and the
    toolchain read."""
    from exporter.core import releases

    return {
        # The releases a program may name (executorch_program's release), oldest first, and the default.
        "RELEASES": {r.name: {"version": r.version, "lock": r.lock, "native": r.native, "arm64": r.arm64,
                              "why_no_arm64": r.why_no_arm64, "runtime_lock": r.runtime_lock,
                              "loaded_by": r.loaded_by} for r in releases.RECORDS},
        "DEFAULT_RELEASE": releases.DEFAULT,
        # lock -> the release whose packages it pins (toolchain/releases/<lock>.lock), each a repository
        # fetched only when a target names the release (toolchain/release_repository.bzl).
        "RELEASE_LOCKS": {r.lock: r.name for r in releases.RECORDS if r.lock},
        # runtime_lock -> the release whose runtimes it installs in a venv of their own (toolchain/
        # runtime_venv_repository.bzl), fetched only when a target runs a program in them.
        "RUNTIME_LOCKS": {r.runtime_lock: r.name for r in releases.RECORDS if r.runtime_lock},
        # the lock of the runtime whose Python binding has an arm64 build -> its release: the aarch64
        # wheel's binding with an aarch64 libtorch, torch_export_<lock>_aarch64
        # (toolchain/libtorch_aarch64.bzl, pinned in toolchain/releases/<lock>_aarch64.lock).
        "ARM64_BINDING_LOCKS": {r.runtime_lock or r.lock: r.name for r in releases.RECORDS
                                if r.arm64 and r.native == "python_binding"},
    }


def facts():
    """{Starlark name: value} of everything the rules take from the exporter."""
    from exporter.actions import eager_quantize, quantize, registry, tokenizer
    from exporter.checks import contract
    from exporter.core import determinism, dtypes, hf_models, kernels, llm_ops, lora, shape_spec
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
        **backend_tables(),
        **release_tables(),
        # The values of config fields with a Literal hint, which the rules check at analysis.
        "IRS": allowed(registry.ExportOptions, "ir"),
        "EAGER_QUANTIZE_SCHEMES": list(eager_quantize.SCHEMES),
        "LLM_OPS": list(llm_ops.OPS),
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
    """The text of exporter_facts.bzl, or of one of OWN_FILES (its facts only)."""
    what, names = OWN_FILES.get(path, ("the rules", ()))
    own = {name for _, listed in OWN_FILES.values() for name in listed}
    lines = [
        f'"""What the exporter\'s Python defines that {what} use (generated from',
        "exporter/facts.py by `bazel run //exporter:update_exporter_facts`; do not edit by hand;",
        '//exporter:facts_test checks that it is current)."""',
    ]
    for name, value in facts().items():
        if (name in names) if path in OWN_FILES else (name not in own):
            lines += ["", f"{name} = {_starlark(value)}"]
    return "\n".join(lines) + "\n"


def main(argv):
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    if not workspace:
        print("facts.py writes into the source tree; run it with `bazel run //exporter:update_exporter_facts`",
              file=sys.stderr)
        return 2
    for path in (BZL, *OWN_FILES):
        with open(os.path.join(workspace, path), "w", encoding="utf-8") as f:
            f.write(render(path))
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main(sys.argv[1:]))
