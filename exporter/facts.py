"""exporter_facts.bzl: what the exporter's Python defines that the rules must agree with, as
Starlark the rules can load (or check their own copies against).

    bazel run //exporter:update_exporter_facts     rewrites exporter/exporter_facts.bzl
    //exporter:facts_test                           fails while the file is not current
"""

import json
import os
import sys

BZL = "exporter/exporter_facts.bzl"


def facts():
    """{Starlark name: value} of everything the rules repeat, read from the exporter's modules."""
    from exporter.actions import lower, quantize, registry
    from exporter.core import determinism, dtypes, kernels, shape_spec

    return {
        # command -> the Bazel mnemonic its rule gives the action, and whether the rule offers the
        # persistent worker (actions/registry.py, @action).
        "EXPORTER_ACTIONS": {
            command: {"mnemonic": a.mnemonic, "worker": a.worker} for command, a in registry.ACTIONS.items()
        },
        "SHAPE_SPEC_DTYPES": list(dtypes.SHAPE_SPEC),
        "HINTS": list(shape_spec.HINTS),
        "BACKENDS": list(lower.BACKENDS),
        "IRS": list(registry.IRS),
        "QUANTIZERS": list(quantize.QUANTIZERS),
        "SCHEMES": {name: needs_calibration for name, (_, needs_calibration) in quantize.SCHEMES.items()},
        "KERNEL_LIBRARIES": list(kernels.BUILTIN),
        "REPRODUCIBLE_MATH_ENV": determinism.REPRODUCIBLE_MATH_ENV,
    }


def _starlark(value, indent=""):
    """value as buildifier formats it (JSON's literals, True/False)."""
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
    return json.dumps(value)


def render():
    """The text of exporter_facts.bzl."""
    lines = [
        '"""What the exporter\'s Python defines that the rules must agree with (generated from',
        "exporter/facts.py by `bazel run //exporter:update_exporter_facts`; do not edit by hand;",
        '//exporter:facts_test checks that it is current)."""',
    ]
    for name, value in facts().items():
        lines += ["", f"{name} = {_starlark(value)}"]
    return "\n".join(lines) + "\n"


def main(argv):
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    if not workspace:
        print("facts.py writes into the source tree; run it with `bazel run //exporter:update_exporter_facts`",
              file=sys.stderr)
        return 2
    with open(os.path.join(workspace, BZL), "w", encoding="utf-8") as f:
        f.write(render())
    print(f"wrote {BZL}")
    return 0


if __name__ == "__main__":
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main(sys.argv[1:]))
