"""delegate_structure_test: checks the delegates of a program that no runtime here can run, by their
structure (exporter/checks/delegate_structure.py, with the backend's own reader): each delegate is
what its backend's runtime loads, with the method's inputs and outputs."""

load("//exporter:exporter_facts.bzl", "BACKENDS", "BACKEND_RECORDS")
load("//rules:providers.bzl", "ExecuTorchProgramInfo")
load("//rules/private/lib:exporter_py.bzl", "EXPORTER_MODULES")
load(":config_test.bzl", "config_target_attrs", "config_test_attrs", "config_test_rule", "test_prefix", "write_test_config")

# The backends whose delegates the check reads (their records' structure_check).
STRUCTURE_BACKENDS = [name for name in BACKENDS if BACKEND_RECORDS[name]["structure_check"]]

def _delegate_structure_test_impl(ctx):
    where = test_prefix("delegate_structure_test", ctx)
    program = ctx.attr.program[ExecuTorchProgramInfo]
    if not [b for b in program.backends if b in STRUCTURE_BACKENDS]:
        fail(where + "{} is lowered for {}, and this test checks {} delegates only; lower it with backends = [{}(...)] or remove this test".format(program.label, program.backends or "the portable runtime", STRUCTURE_BACKENDS, STRUCTURE_BACKENDS[0]))
    config = {
        "label": ctx.attr.test_label,
        "program": str(program.label),
        "pte": program.pte.short_path,
    }
    return write_test_config(ctx, config, [program.pte])

_delegate_structure_test = config_test_rule(
    implementation = _delegate_structure_test_impl,
    doc = "The rule behind delegate_structure_test: it checks the attributes and writes the JSON config that exporter/checks/delegate_structure.py reads and the launcher that runs it.",
    attrs = config_test_attrs({
        "program": attr.label(mandatory = True, providers = [ExecuTorchProgramInfo], doc = "The program, lowered for a backend whose delegates the check reads."),
    }),
)

def delegate_structure_test(name, program, **kwargs):
    """Checks a program here, where no runtime can run it: its delegates' structure.

    Each delegate of a backend whose structure the check reads must be what that backend's
    runtime loads (for Core ML, a model package; docs/backends.md says what each backend's reader
    checks); a method that one delegate runs whole must have the delegate's inputs (each one's
    largest shape) and as many outputs. What the delegate computes is checked only on the
    backend's own hardware.

    Args:
      name: the test's name.
      program: an executorch_program lowered for such a backend.
      **kwargs: passed to the test (tags, size, timeout, ...).
    """
    _delegate_structure_test(
        program = program,
        **config_target_attrs(name, EXPORTER_MODULES["delegate_structure"], kwargs)
    )
