"""Where a program with ExecuTorch's LLM operators (llm_program's llm_ops) runs: their kernels are
in the wheel only in libcustom_ops_aot_lib.so, beside libtorch and libpython, which only
//native:et_runner_llm_ops links (on x86-64 and, built for arm64, under qemu)."""

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

def check_llm_ops_runtimes(where, program, native_runner):
    """Fails in one line when a test would run a program with llm_ops where their kernels are not.

    Args:
      where: the message prefix naming the test.
      program: the ExecuTorchProgramInfo.
      native_runner: the Label of the test's native runner (on x86-64 or built for arm64), or
        None when it runs none.
    """
    llm_ops = llm_ops_of(program)
    if llm_ops and native_runner == DEFAULT_NATIVE_RUNNER:
        fail(where + "{} calls ExecuTorch's LLM operators (llm_ops = {}), whose kernels {} does not link; set native_runner = \"{}\"".format(program.label, llm_ops, DEFAULT_NATIVE_RUNNER, LLM_OPS_RUNNER))
