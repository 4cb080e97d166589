"""The one helper through which every rule runs the exporter."""

load("//exporter:exporter_facts.bzl", "EXPORTER_ACTIONS", "REPORT_ACTIONS", _MATH_ENV = "REPRODUCIBLE_MATH_ENV")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")

# Exporter actions need no network; the sandbox blocks it, so a model cannot download weights.
_SANDBOX_REQUIREMENTS = {"block-network": ""}

# The same floats on every x86-64 machine with AVX2: ATen's AVX2 kernels and MKL's reproducible
# AVX2 path (exporter/core/determinism.py says why), as the exporter defines them.
REPRODUCIBLE_MATH_ENV = _MATH_ENV

def run_exporter(ctx, *, command, progress_message, config, inputs, outputs, per_machine = False, release = None):
    """Runs `exporter <command>` with a JSON config written for this action.

    The action's mnemonic, and whether it may run in the persistent worker, come from the
    exporter's registry of actions (exporter/actions/registry.py, generated into
    //exporter:exporter_facts.bzl), so a rule names only its command.

    Args:
      ctx: the rule context; its rule must declare TORCH_EXPORT_TOOLCHAIN_TYPE.
      command: one of the registry's commands, EXPORTER_ACTIONS' keys (generated from
        exporter/actions/registry.py).
      progress_message: shown while the action runs; name the target in it.
      config: dict of options for the exporter; "label", "identity" and "outputs" are added.
      inputs: list or depset of the Files the exporter reads besides the toolchain's.
      outputs: dict of role -> declared File (or directory).
      per_machine: True for outputs that depend on this machine's CPU (a program of a backend
        whose record says per_machine): the action is no-remote, neither cached remotely nor run
        by a remote executor.
      release: the ExecuTorchReleaseInfo of the ExecuTorch release to run in (docs/compatibility.md),
        or None for the toolchain's own: the action declares the release's packages, names its
        identity, and runs in a worker of that release, one per release whatever the command.

    Returns:
      The action's log File (`<name>.<command>.log`): everything torch printed, and on failure
      the traceback. Bazel keeps it after a failed action; the error message names it.
    """
    if command not in EXPORTER_ACTIONS:
        fail("run_exporter: {} is not an exporter command; the registry has {}".format(repr(command), sorted(EXPORTER_ACTIONS)))
    log = ctx.actions.declare_file("{}.{}.log".format(ctx.label.name, command))
    warm_up = None if release else getattr(ctx.file, "_{}_warm_up".format(command), None)
    _run(
        ctx,
        worker_command = command,
        request_command = command,
        config_name = "{}.{}.config.json".format(ctx.label.name, command),
        progress_message = progress_message,
        config = config,
        inputs = depset(
            [warm_up] if warm_up else [],
            transitive = [depset(inputs) if type(inputs) == "list" else inputs],
        ),
        outputs = dict(outputs, log = log),
        per_machine = per_machine,
        release = release,
    )
    return log

# Every rule that runs the exporter has it; run_exporter reads it.
DEADLINE_ATTRS = {
    "deadline": attr.int(
        default = 0,
        doc = "Seconds this target's exporter actions may run before the exporter stops them " +
              "and the build fails, e.g. 7200 for a model that takes long to lower; 0 (the " +
              "default) takes --@rules_torch_export//rules:exporter_deadline (in rules_torch_export's " +
              "own workspace, --//rules:exporter_deadline), which is 3600.",
    ),
}

def warm_up_attrs(*commands):
    """Implicit attributes: a rule's `command` actions wait for their worker's warm-up.

    The warm-up action (//rules/private:<command>_warm_up) needs no input, so Bazel starts it,
    and the worker, with the build's first actions.
    """
    return {
        "_{}_warm_up".format(command): attr.label(
            default = Label("//rules/private:{}_warm_up".format(command)),
            allow_single_file = True,
        )
        for command in commands
    }

def run_warm_up(ctx, command):
    """Declares the warm-up action of `command`'s persistent worker.

    A request with that action's mnemonic and worker key that needs no input, so Bazel runs it,
    and starts the worker, as soon as the build starts. The worker warms up before it answers;
    the request writes only a marker, which the rules' `command` actions take as an input
    (exporter/driver/request.py, WARM_UP).

    Returns:
      The marker File.
    """
    marker = ctx.actions.declare_file(ctx.label.name + ".warm")
    _run(
        ctx,
        worker_command = command,
        request_command = "warm_up",
        config_name = ctx.label.name + ".config.json",
        progress_message = "Warming up the exporter's {} worker".format(EXPORTER_ACTIONS[command]["mnemonic"]),
        config = {},
        inputs = depset(),
        outputs = {"marker": marker},
    )
    return marker

def execution_requirements(toolchain, worker, remote, per_machine = False):
    """An exporter action's execution requirements.

    The sandbox's; the worker's, under the key of `worker`'s mnemonic (Bazel 4.2.3 keys a worker
    by "worker-key-mnemonic" when set, else by the action's mnemonic); no-remote-exec for an
    action that needs a tool of this machine that the remote image lacks (graphviz's dot); and
    no-remote for one whose outputs are per machine (a per-machine backend's program). Public for
    tests/starlark: Bazel 4.2.3 shows an action's execution_info to Starlark only with
    --experimental_google_legacy_api.

    Args:
      toolchain: the exporter toolchain (its worker_requirements).
      worker: the command whose worker runs the action, or "" for none.
      remote: whether the action may run remotely (the registry's "remote").
      per_machine: whether its outputs depend on this machine's CPU.

    Returns:
      The dict for ctx.actions.run's execution_requirements.
    """
    requirements = dict(_SANDBOX_REQUIREMENTS)
    if worker and toolchain.worker_requirements:
        requirements.update(toolchain.worker_requirements)
        requirements["worker-key-mnemonic"] = EXPORTER_ACTIONS[worker]["mnemonic"]
    if not remote:
        requirements["no-remote-exec"] = ""
    if per_machine:
        requirements["no-remote"] = ""
    return requirements

def _release_arguments(release):
    """(the exporter's arguments before the request, the release's inputs) for a release's action.

    A release of packages ahead of the toolchain's venv names them before the request, so that
    the exporter puts them first on the import path before it imports ExecuTorch; the argument is
    part of the worker's key, so each release gets a process of its own.
    """
    if not release:
        return [], []
    return ["--executorch_layer=" + release.identity.path], release.packages + [release.identity]

def _run(ctx, *, worker_command, request_command, config_name, progress_message, config, inputs, outputs, per_machine = False, release = None):
    """`exporter request_command CONFIG` as an action with worker_command's mnemonic and worker."""
    action = EXPORTER_ACTIONS[worker_command]

    # The command whose warm worker runs this action ("" for none): actions that share one
    # (quantize the export's, etrecord the lowering's) share its key, and so its process. A
    # release's actions share the lowering's: the release's one warm process.
    worker = "lower" if release and action["worker"] else action["worker"]
    toolchain = ctx.toolchains[TORCH_EXPORT_TOOLCHAIN_TYPE]
    identity = release.identity if release else toolchain.identity
    layer, release_inputs = _release_arguments(release)
    config_file = ctx.actions.declare_file(config_name)
    full_config = dict(config)
    full_config.update(
        label = str(ctx.label),
        identity = identity.path,
        outputs = {role: f.path for role, f in outputs.items()},
    )
    ctx.actions.write(config_file, json.encode_indent(full_config) + "\n")

    # A params file always, so that the same command line can feed a persistent worker.
    request = ctx.actions.args()
    request.add(request_command)
    request.add(config_file)

    # A deadline changes no output, so it stays out of the config (and the manifests) and the
    # build's flag out of the key too: the exporter reads it beside the stamp (toolchain/deadline.bzl).
    # A target's own `deadline` is its BUILD file's, the same on every machine.
    if getattr(ctx.attr, "deadline", 0):
        request.add("--deadline={}".format(ctx.attr.deadline))
    request.add("--deadline_stamp", toolchain.deadline_stamp)
    request.add("--deadline_flag=" + toolchain.deadline_flag)
    request.use_param_file("@%s", use_always = True)
    request.set_param_file_format("multiline")

    ctx.actions.run(
        executable = toolchain.python,
        # --warm tells a persistent worker which work to warm up for; one-shot runs ignore it.
        arguments = [toolchain.exporter_main.path, "--warm=" + (worker or worker_command)] + layer + [request],
        inputs = depset([config_file, toolchain.identity, toolchain.deadline_stamp] + release_inputs, transitive = [inputs]),
        # Tools, not plain inputs: the exporter's own files, and a report's renderer for the
        # actions that draw one (and only for them: editing a report's code re-runs reports only).
        # Bazel 4.2.3 still reuses a worker after they change, so exporter/driver/worker.py checks
        # its sources before each request.
        tools = depset(
            [toolchain.exporter_main],
            transitive = [toolchain.exporter_srcs] + ([toolchain.report_srcs] if worker_command in REPORT_ACTIONS else []),
        ),
        outputs = outputs.values(),
        mnemonic = action["mnemonic"],
        progress_message = progress_message,
        env = dict(
            REPRODUCIBLE_MATH_ENV,
            PYTHONDONTWRITEBYTECODE = "1",
            PYTHONHASHSEED = "0",
            PYTHONNOUSERSITE = "1",
        ),
        execution_requirements = execution_requirements(toolchain, worker, action["remote"], per_machine),
    )
