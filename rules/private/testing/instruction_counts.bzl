"""A program's instruction counts: program_budget_test's max_instructions, and its build action.

The InstructionCount action (exporter/actions/instructions.py) runs the native runner under
valgrind's callgrind, one thread, each budgeted method once on its synthetic inputs at their
largest shapes, and writes `<test>.instructions.json`: each method's instructions, the loading's
apart, and the CPU they were counted on. The test compares that file, as it compares the sizes
of the program's manifest: it runs nothing itself.
"""

load("//rules/private/lib:attr_checks.bzl", "check_method")
load("//rules/private/lib:exporter_action.bzl", "run_exporter")
load("//rules/private/lib:llm_ops_runtimes.bzl", "LLM_OPS_RUNNER", "native_runner_of")

# The attributes of a rule that counts instructions: the runner, built for the machine the action
# runs on, and Debian's valgrind, declared (toolchain/valgrind_repository.bzl).
INSTRUCTION_ATTRS = {
    "instructions_runner": attr.label(
        default = Label("//native:et_runner"),
        executable = True,
        cfg = "exec",
        doc = "The native runner that max_instructions counts in: //native:et_runner, or a cc_binary of //native:runner_main that also links an app's own kernels (built for the build machine).",
    ),
    # For a program with llm_ops when instructions_runner is et_runner: it links their kernels.
    "_llm_ops_instructions_runner": attr.label(default = LLM_OPS_RUNNER, executable = True, cfg = "exec"),
    "instructions_file": attr.output(doc = "The counts, `<name>.instructions.json` (set by the macro with max_instructions)."),
    "_callgrind": attr.label(default = Label("@valgrind//:callgrind.sh"), allow_single_file = True),
    "_valgrind_files": attr.label(default = Label("@valgrind//:files")),
    "_valgrind_version": attr.label(default = Label("@valgrind//:version.txt"), allow_single_file = True),
}

# A count with a unit: "36.3M" is 36,300,000 (powers of 1000, as instruction counts are written).
_UNITS = {"k": 1000, "M": 1000000, "G": 1000000000}

def parse_instructions(where, method, value):
    """An instruction count from an int or a string such as "36.3M", or fail naming the attribute.

    Args:
      where: the start of a failure message, naming the test.
      method: the method the count is for.
      value: the count as the BUILD file gives it.

    Returns:
      The count, an int.
    """
    text = str(value).strip() if type(value) in ("int", "string") else ""
    scale = _UNITS.get(text[-1:], 1) if text else 1
    number = text[:-1].strip() if scale != 1 else text
    whole, _, fraction = number.partition(".")
    if not whole.isdigit() or (fraction and not fraction.isdigit()) or float(number) * scale < 1:
        fail("{}max_instructions[{}] = {} is not an instruction count; write an int or a number with k, M or G, e.g. \"40M\"".format(where, repr(method), repr(value)))
    return int(float(number) * scale)

def instruction_limits(where, given, program):
    """{method: instructions} of max_instructions, each method one of the program's.

    Args:
      where: the start of a failure message, naming the test.
      given: the macro's limits, decoded.
      program: the ExecuTorchProgramInfo budgeted.

    Returns:
      The dict, empty without max_instructions.
    """
    limits = given.get("max_instructions") or {}
    if type(limits) != "dict":
        fail(where + "max_instructions must be a dict of method name to instruction count, e.g. {\"forward\": \"40M\"}")
    for method in limits:
        check_method(where, "max_instructions names method", method, program)
    return {method: parse_instructions(where, method, value) for method, value in limits.items()}

def instruction_counts(ctx, program, methods):
    """Declares the InstructionCount action of a test, which writes its `<name>.instructions.json`.

    Args:
      ctx: the test rule's context (with INSTRUCTION_ATTRS and the exporter's toolchain).
      program: the ExecuTorchProgramInfo whose methods to count.
      methods: the methods to call, in this order.

    Returns:
      The counts' File.
    """
    counts = ctx.outputs.instructions_file
    if not counts:
        fail("program_budget_test {}: the rule was called without instructions_file; use the program_budget_test macro".format(ctx.attr.test_label))
    runner = native_runner_of(program, ctx.attr.instructions_runner, ctx.attr._llm_ops_instructions_runner)[DefaultInfo]
    run_exporter(
        ctx,
        command = "instructions",
        progress_message = "Counting the instructions of {} under callgrind ({})".format(program.label, ", ".join(methods)),
        config = {
            "program": str(program.label),
            "pte": program.pte.path,
            "ptd": program.ptd.path if program.ptd else None,
            "methods": methods,
            "runner": runner.files_to_run.executable.path,
            "callgrind": ctx.file._callgrind.path,
            "valgrind_version": ctx.file._valgrind_version.path,
        },
        inputs = depset(
            [program.pte, ctx.file._callgrind, ctx.file._valgrind_version] + ([program.ptd] if program.ptd else []),
            transitive = [runner.files, runner.default_runfiles.files, ctx.attr._valgrind_files.files],
        ),
        outputs = {"counts": counts},
        per_machine = True,
    )
    return counts
