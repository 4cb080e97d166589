"""The tiny programs that //exporter/tests builds (tiny_ep, tiny_portable_pte, tiny_xnnpack_pte and
their outputs), found in a test's runfiles."""

import json

from runfiles import Runfiles

from exporter.core import operators

_RUNFILES = Runfiles.Create()


def path(name):
    """The runfiles path of a file //exporter/tests built, e.g. "tiny_portable_pte.pte"."""
    return _RUNFILES.Rlocation("rules_torch_export/exporter/tests/" + name)


def used_operators(program):
    """The kernel names of the operators a built program's manifest lists outside delegates."""
    with open(path(program + ".pte.json"), encoding="utf-8") as f:
        methods = json.load(f)["methods"]
    return {operators.kernel_name(op) for m in methods.values() for op in m["operators"]}
