"""delegate_structure_test: checks the delegates of a program that no runtime here can run, by their
structure (exporter/checks/delegate_structure.py): a Core ML delegate is a model package with the
method's inputs and outputs."""

load("//rules:providers.bzl", "ExecuTorchProgramInfo")
load("//rules/private/lib:exporter_py.bzl", "EXPORTER_MODULES")
load(":config_test.bzl", "config_target_attrs", "config_test_attrs", "config_test_rule", "test_prefix", "write_test_config")

# The backends whose delegates the check reads.
STRUCTURE_BACKENDS = ["coreml"]

def _delegate_structure_test_impl(ctx):
    where = test_prefix("delegate_structure_test", ctx)
    program = ctx.attr.program[ExecuTorchProgramInfo]
    if not [b for b in program.backends if b in STRUCTURE_BACKENDS]:
        fail(where + "{} is lowered for {}, and this test checks {} delegates only; lower it with backends = [coreml(...)] or remove this test".format(program.label, program.backends or "the portable runtime", STRUCTURE_BACKENDS))
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
        "program": attr.label(mandatory = True, providers = [ExecuTorchProgramInfo], doc = "The Core ML program."),
    }),
)

def delegate_structure_test(name, program, **kwargs):
    """Checks a Core ML program here, where it cannot run: its delegates' structure.

    Each Core ML delegate of the .pte must unflatten (with ExecuTorch's executorchcoreml) into a
    model package that coremltools loads; a method that one delegate runs whole must have the
    delegate's inputs (each one's largest shape) and as many outputs. What the delegate computes
    is checked only on Apple hardware (docs/backends.md).

    Args:
      name: the test's name.
      program: an executorch_program lowered with coreml(...).
      **kwargs: passed to the test (tags, size, timeout, ...).
    """
    _delegate_structure_test(
        program = program,
        **config_target_attrs(name, EXPORTER_MODULES["delegate_structure"], kwargs)
    )
