"""Where a program with ExecuTorch's LLM operators (llm_program's llm_ops) runs: their kernels are
in the wheel only in libcustom_ops_aot_lib.so, beside libtorch and libpython, which only
//native:et_runner_llm_ops links (on x86-64 and, built for arm64, under qemu). A test that names no
native runner runs such a program in it on x86-64; an arm64 run must name it."""

load(":releases.bzl", "DEFAULT_NATIVE_RUNNER")

# The native runner that links those kernels (native/BUILD).
LLM_OPS_RUNNER = Label("//native:et_runner_llm_ops")

def llm_ops_of(program):
    """The llm_ops any method of a program was exported with.

    Args:
      program: the ExecuTorchProgramInfo.

    Returns:
      The list of their names ([] for none).
    """
    found = []
    for exported in program.methods.values():
        found += [op for op in exported.options.get("llm_ops", []) if op not in found]
    return found

# The test rules' attributes for it: built for the test's machine (x86-64), as every build builds
# it; never for arm64 here, whose aarch64 libtorch is a 2.5 GB download (the nightly tier's).
LLM_OPS_RUNNER_ATTRS = {
    "_llm_ops_runner": attr.label(default = LLM_OPS_RUNNER, executable = True, cfg = "target"),
}

def native_runner_of(program, given, llm_ops_runner):
    """The native runner a test runs `program` in.

    `given`, or for a program with llm_ops when `given` is the default //native:et_runner,
    `llm_ops_runner` (et_runner_llm_ops, a superset).

    Args:
      program: the ExecuTorchProgramInfo.
      given: the test's native runner (a Target).
      llm_ops_runner: the test's et_runner_llm_ops (a Target, built for the same platform).

    Returns:
      The Target.
    """
    return llm_ops_runner if llm_ops_of(program) and given.label == DEFAULT_NATIVE_RUNNER else given

def check_llm_ops_runtimes(where, program, arm64_runner):
    """Fails in one line when an arm64 run would run a program with llm_ops where their kernels are not.

    Args:
      where: the message prefix naming the test.
      program: the ExecuTorchProgramInfo.
      arm64_runner: the Label of the runner the test builds for arm64, or None for no arm64 run.
    """
    llm_ops = llm_ops_of(program)
    if llm_ops and arm64_runner == DEFAULT_NATIVE_RUNNER:
        fail(where + "{} calls ExecuTorch's LLM operators (llm_ops = {}), whose kernels {} built for arm64 does not link; for the arm64 run set native_runner = \"{}\" (its aarch64 libtorch is a 2.5 GB download: a nightly target), or set llm_ops = [] in its llm_program".format(program.label, llm_ops, DEFAULT_NATIVE_RUNNER, LLM_OPS_RUNNER))
