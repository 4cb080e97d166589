"""The one helper through which every rule runs the exporter."""

load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")

# Exporter actions need no network; the sandbox blocks it, so a model cannot download weights.
_SANDBOX_REQUIREMENTS = {"block-network": ""}

# The same floats on every x86-64 machine: ATen's AVX2 kernels and MKL's reproducible AVX2 path
# (exporter/hermetic.py says why; //tests/starlark:parity_test keeps the two lists equal).
REPRODUCIBLE_MATH_ENV = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2,STRICT"}

def run_exporter(ctx, *, command, mnemonic, progress_message, config, inputs, outputs, worker = True):
    """Runs `exporter <command>` with a JSON config written for this action.

    Args:
      ctx: the rule context; its rule must declare TORCH_EXPORT_TOOLCHAIN_TYPE.
      command: "export", "lower" or "bundle" (exporter/configs.py has one config type each).
      mnemonic: the action's mnemonic (TorchExport, ExecuTorchLower); tools rely on it.
      progress_message: shown while the action runs; name the target in it.
      config: dict of options for the exporter; "label", "identity" and "outputs" are added.
      inputs: list or depset of the Files the exporter reads besides the toolchain's.
      outputs: dict of role -> declared File (or directory).
      worker: offer the persistent worker; False for light actions that need no warm torch.

    Returns:
      The action's log File (`<name>.<command>.log`): everything torch printed, and on failure
      the traceback. Bazel keeps it after a failed action; the error message names it.
    """
    toolchain = ctx.toolchains[TORCH_EXPORT_TOOLCHAIN_TYPE]
    config_file = ctx.actions.declare_file("{}.{}.config.json".format(ctx.label.name, command))
    log = ctx.actions.declare_file("{}.{}.log".format(ctx.label.name, command))
    outputs = dict(outputs, log = log)
    full_config = dict(config)
    full_config.update(
        label = str(ctx.label),
        identity = toolchain.identity.path,
        outputs = {role: f.path for role, f in outputs.items()},
    )
    ctx.actions.write(config_file, json.encode_indent(full_config) + "\n")

    # A params file always, so that the same command line can feed a persistent worker.
    request = ctx.actions.args()
    request.add(command)
    request.add(config_file)
    request.use_param_file("@%s", use_always = True)
    request.set_param_file_format("multiline")

    ctx.actions.run(
        executable = toolchain.python,
        # --warm tells a persistent worker which work to warm up for; one-shot runs ignore it.
        arguments = [toolchain.exporter_main.path, "--warm=" + command, request],
        inputs = depset(
            [config_file, toolchain.identity],
            transitive = [depset(inputs) if type(inputs) == "list" else inputs],
        ),
        # Tools, not plain inputs: the exporter's own files. Bazel 4.2.3 still reuses a worker
        # after they change, so exporter/worker.py checks its sources before each request.
        tools = depset([toolchain.exporter_main], transitive = [toolchain.exporter_srcs]),
        outputs = outputs.values(),
        mnemonic = mnemonic,
        progress_message = progress_message,
        env = dict(
            REPRODUCIBLE_MATH_ENV,
            PYTHONDONTWRITEBYTECODE = "1",
            PYTHONHASHSEED = "0",
            PYTHONNOUSERSITE = "1",
        ),
        execution_requirements = dict(
            _SANDBOX_REQUIREMENTS,
            **(toolchain.worker_requirements if worker else {})
        ),
    )
    return log
