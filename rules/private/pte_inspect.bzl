"""pte_inspect: `bazel run` target that prints what a .pte holds, without running it."""

load("//rules/private/lib:exporter_py.bzl", "EXPORTER_MODULES", "exporter_py")

def pte_inspect(name, program, **kwargs):
    """Declares `bazel run //pkg:<name> [-- --json]`, which summarises `program`'s .pte.

    The summary: the ExecuTorch release that lowered the program and the oldest runtime measured
    to load it (from the program's manifest, which its files include; a `.pte` does not say),
    methods with their input and output types and shapes, operators and their counts, delegates
    with sizes, constant and segment sizes, and planned memory per method.

    Args:
      name: the binary's name; by convention "<program name>.inspect".
      program: an executorch_program target, or any target or file that provides a .pte.
      **kwargs: passed to the py_binary.
    """
    exporter_py(
        native.py_binary,
        name = name,
        module = EXPORTER_MODULES["pte_inspect"],
        data = [program],
        args = ["$(rootpaths {})".format(program)],
        **kwargs
    )
