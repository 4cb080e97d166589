"""Where a program with ExecuTorch's LLM operators (llm_program's llm_ops) runs: their kernels are
in the wheel only in libcustom_ops_aot_lib.so, beside libtorch and libpython."""

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

def check_llm_ops_runtimes(where, program, arm64, native_runner):
    """Fails in one line when a test would run a program with llm_ops where their kernels are not.

    Args:
      where: the message prefix naming the test.
      program: the ExecuTorchProgramInfo.
      arm64: whether the test runs the program on arm64.
      native_runner: the Label of the test's native runner, or None when it runs none.
    """
    llm_ops = llm_ops_of(program)
    if not llm_ops:
        return
    if arm64:
        fail(where + "{} calls ExecuTorch's LLM operators (llm_ops = {}), which cannot run on arm64 here: the aarch64 wheel has their kernels only in libcustom_ops_aot_lib.so, which needs an aarch64 libtorch and libpython that the arm64 runner's sysroot lacks; drop the arm64 run (docs/llm.md)".format(program.label, llm_ops))
    if native_runner == DEFAULT_NATIVE_RUNNER:
        fail(where + "{} calls ExecuTorch's LLM operators (llm_ops = {}), whose kernels {} does not link; set native_runner = \"{}\"".format(program.label, llm_ops, DEFAULT_NATIVE_RUNNER, LLM_OPS_RUNNER))
