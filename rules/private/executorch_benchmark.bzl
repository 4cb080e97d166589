"""executorch_benchmark and executorch_profile: `bazel run` targets that time a program in
ExecuTorch's native runtime, as a whole or per operator."""

load("//exporter:exporter_facts.bzl", "DEFAULT_RELEASE")
load("//rules:providers.bzl", "Arm64BinaryInfo", "ExecuTorchProgramInfo", "ExecuTorchReleaseInfo")
load("//rules/private/lib:attr_checks.bzl", "check_method", "message_prefix")
load("//rules/private/lib:llm_ops_runtimes.bzl", "LLM_OPS_RUNNER_ATTRS", "native_runner_of")
load("//rules/private/lib:releases.bzl", "RELEASE_ATTRS", "check_arm64_release", "check_test_release", "release_runtime_config", "release_test_attrs", "release_text", _DEFAULT_NATIVE_RUNNER = "DEFAULT_NATIVE_RUNNER")
load("//rules/private/lib:runfiles.bzl", "write_launcher")
load(":backends.bzl", "package_identities", "runs_only_on", "runtimes_here", "test_device")
load(":program_report.bzl", "GRAPHVIZ_ATTRS", "runfiles_report_config")

# The runner a rule starts: numerics_test, executorch_benchmark and executorch_profile take it
# (numerics_test and llm_generation_test also build it for arm64).
DEFAULT_NATIVE_RUNNER = _DEFAULT_NATIVE_RUNNER

NATIVE_RUNNER_ATTRS = {
    "native_runner": attr.label(
        default = DEFAULT_NATIVE_RUNNER,
        executable = True,
        cfg = "target",
        doc = "The native runner: //native:et_runner (the wheel's kernels and the backends it links, docs/native.md; " +
              "on x86-64, //native:et_runner_llm_ops for a program with llm_ops), or a cc_binary of " +
              "//native:runner_main that also links an app's own kernels.",
    ),
}

# What both rules take besides their own attrs.
_RUN_ATTRS = dict(NATIVE_RUNNER_ATTRS, **dict(LLM_OPS_RUNNER_ATTRS, **{
    "method": attr.string(default = "forward", doc = "The method to call."),
}))

def _native_runner(ctx, program):
    """The runner that times the program: native_runner, or et_runner_llm_ops for llm_ops (llm_ops_runtimes.bzl)."""
    return native_runner_of(program, ctx.attr.native_runner, ctx.attr._llm_ops_runner)

def _at_least(where, name, value, minimum):
    if value < minimum:
        fail(where + "{} = {} is too small; use at least {}".format(name, value, minimum))

def _checked_program(ctx, kind):
    """(where, the program's ExecuTorchProgramInfo) after the checks both rules share."""
    where = message_prefix(kind, str(ctx.label))
    program = ctx.attr.program[ExecuTorchProgramInfo]
    check_method(where, "method", ctx.attr.method, program, owner = "program {}".format(program.label))
    _at_least(where, "iterations", ctx.attr.iterations, 1)
    return where, program

def _run_script(ctx, kind, program, command, extra_files = [], extra_runfiles = None, lines = []):
    """The rule's DefaultInfo: a script that runs `command`.

    The command's paths are relative to this workspace's runfiles, which hold the program, its
    .ptd, the runner, `extra_files` and `extra_runfiles`.
    """
    script = ctx.actions.declare_file(ctx.label.name)
    write_launcher(ctx, script, "{} of {}".format(kind, program.label), "\n".join([
        "cd \"$runfiles/" + ctx.workspace_name + "\"",
    ] + lines + [
        "exec " + " ".join(["'{}'".format(a) for a in command]) + " \"$@\"",
    ]))
    files = [program.pte] + ([program.ptd] if program.ptd else []) + extra_files
    runfiles = ctx.runfiles(files = files).merge(_native_runner(ctx, program)[DefaultInfo].default_runfiles)
    if extra_runfiles:
        runfiles = runfiles.merge(extra_runfiles)
    return DefaultInfo(executable = script, runfiles = runfiles)

def _mode(ctx, where, program):
    """What benchmark.py times: the native runner's figures and what it sets beside them.

    Returns:
      "python", "native-only", or "arm64" for an arm64_binary (under qemu on x86-64: figures
      labelled emulated, no Python runtime).
    """
    runtimes = runtimes_here(program.backends)
    if not runtimes:
        nowhere = [name for name in program.backends if not runtimes_here([name])]
        fail(where + "program {} is lowered for {}, which runs on {} only; no runtime of this machine can time it: benchmark it on {} (docs/backends.md)".format(program.label, program.backends, runs_only_on(nowhere[0]), test_device(nowhere[0])))
    arm64 = Arm64BinaryInfo in ctx.attr.native_runner
    if arm64 and "arm64" not in runtimes:
        fail(where + "program {} ({}) runs here in {} only, not on arm64; remove native_runner".format(program.label, program.backends, runtimes))
    if arm64:
        return "arm64"
    return "python" if ctx.attr.compare_python else "native-only"

def _release_arguments(ctx, where, program):
    """(benchmark.py's arguments naming the release whose runtimes time the program, its Files)."""
    release = check_test_release(where, program, ctx.attr.release_name, ctx.attr.any_release_order)
    check_arm64_release(where, release, Arm64BinaryInfo in ctx.attr.native_runner)
    entries, files = release_runtime_config(ctx, program, release)
    if not entries:
        return [], []
    runtimes = ctx.attr.release[ExecuTorchReleaseInfo] if ctx.attr.release else None
    if runtimes and runtimes.runtime_python:  # 1.3's: its Python runtime times the program in its own venv
        return ["--release=" + release, "--runtime_python=" + runtimes.runtime_python.short_path], [runtimes.runtime_python, runtimes.runtime_identity]
    layer = ["--executorch_layer=" + entries["executorch_layer"]] if entries["executorch_layer"] else []
    return ["--release=" + release] + layer, files

def _executorch_benchmark_impl(ctx):
    where, program = _checked_program(ctx, "executorch_benchmark")
    _at_least(where, "warmup", ctx.attr.warmup, 0)
    release_arguments, release_files = _release_arguments(ctx, where, program)
    mode = _mode(ctx, where, program)
    command = [
        ctx.executable._benchmark.short_path,
        _native_runner(ctx, program)[DefaultInfo].files_to_run.executable.short_path,
        program.pte.short_path,
        program.ptd.short_path if program.ptd else "-",
        ctx.attr.method,
        str(ctx.attr.warmup),
        str(ctx.attr.iterations),
        mode,
    ] + release_arguments + [f.short_path for f in package_identities(program.backend_packages)]

    # Timings are printed, never a build output: they would make the cache and the
    # byte-identity tests depend on the machine's load.
    banner = "echo '{} ({}): {} of {}, inputs at their largest shapes, {} warm-up + {} timed calls' >&2".format(
        "arm64 runtime, under qemu on x86-64" if mode == "arm64" else "native runtime",
        _native_runner(ctx, program).label,
        ctx.attr.method,
        program.label,
        ctx.attr.warmup,
        ctx.attr.iterations,
    )
    return [_run_script(
        ctx,
        "executorch_benchmark",
        program,
        command,
        extra_files = program.backend_packages + release_files,
        extra_runfiles = ctx.attr._benchmark[DefaultInfo].default_runfiles,
        lines = [banner],
    )]

_executorch_benchmark = rule(
    implementation = _executorch_benchmark_impl,
    executable = True,
    doc = """The rule behind executorch_benchmark: it checks the attributes and writes the launcher of benchmark.py.""",
    attrs = dict({
        "program": attr.label(mandatory = True, providers = [ExecuTorchProgramInfo], doc = "The executorch_program to time."),
        "warmup": attr.int(default = 3, doc = "Untimed calls after the first."),
        "iterations": attr.int(default = 20, doc = "Timed calls."),
        "compare_python": attr.bool(
            default = True,
            doc = "Also time the method in ExecuTorch's Python runtime (executorch.runtime), " +
                  "in the same run; False for a program only the app's own runner can run.",
        ),
        "_benchmark": attr.label(default = Label("//rules/private:benchmark"), executable = True, cfg = "target"),
    }, **dict(_RUN_ATTRS, **RELEASE_ATTRS)),
)

def executorch_benchmark(name, program, warmup = 3, iterations = 20, compare_python = True, native_runner = None, method = "forward", release = None, **kwargs):
    """`bazel run` it to time one method of a program in ExecuTorch's native runtime.

    Prints a table (load time, first call, p50/p90/min per call, planned memory, peak RSS), then the
    same method timed in ExecuTorch's Python runtime on the same inputs with its p50 over the native
    p50, and last all of it as one line of JSON; `-- --json FILE` also writes the JSON to FILE. The
    method's inputs are synthetic, at their largest shapes (docs/native.md).

    With an arm64_binary as native_runner, the figures come from the arm64 runner, which on x86-64
    runs under qemu: the report labels them EMULATED (not device latency; "emulated": true in the
    JSON) and times no Python runtime beside them.

    A program of a backend with packages of its own runs with them (its runtime library, from the
    backend's repository; docs/backends.md); one that no runtime here runs fails at analysis, naming
    the hardware it runs on.

    Args:
      name: the target's name.
      program: the executorch_program to time.
      warmup: untimed calls after the first.
      iterations: timed calls.
      compare_python: also time the method in ExecuTorch's Python runtime (executorch.runtime), in
        the same run; False for a program only the app's own runner can run.
      native_runner: the native runner: //native:et_runner (the release's, with release), a
        cc_binary of //native:runner_main that also links an app's own kernels, or an arm64_binary.
      method: the method to call.
      release: the ExecuTorch release whose runtimes time it, e.g. "1.4": its native runner
        (//native:et_runner_1_4) and its Python runtime (from its lock, ahead of the toolchain's
        venv), whose version the report names. 1.3's Python runtime times it in a child process
        on the venv of its own, which runs the timing loop there. Default: the toolchain's, which
        must be the program's; an older one than the program's fails (docs/compatibility.md).
      **kwargs: passed to the target (tags, visibility, ...).
    """
    attrs = release_test_attrs(release, None, native_runner, kwargs)
    attrs.pop("arm64_runner")  # an arm64 run is an arm64_binary native_runner
    attrs.update(kwargs)
    _executorch_benchmark(
        name = name,
        program = program,
        warmup = warmup,
        iterations = iterations,
        compare_python = compare_python,
        method = method,
        **attrs
    )

def _check_profile_release(ctx, where, program):
    """numerics_test's release checks; then only the default release's runner writes an ETDump."""
    release = check_test_release(where, program, ctx.attr.release_name, ctx.attr.any_release_order)
    check_arm64_release(where, release, Arm64BinaryInfo in ctx.attr.native_runner)
    if release != DEFAULT_RELEASE:
        fail(where + "release = \"{}\": {}'s native runner records no ETDump (its wheel ships no ETDump library; native/release_runner.bzl), which the profile reads; profile the program in {}'s runtime (release = \"{}\"), or time it in {}'s with executorch_benchmark(release = \"{}\") (docs/compatibility.md)".format(release, release_text(release), release_text(DEFAULT_RELEASE), DEFAULT_RELEASE, release, release))

def _executorch_profile_impl(ctx):
    where, program = _checked_program(ctx, "executorch_profile")
    _check_profile_release(ctx, where, program)
    if Arm64BinaryInfo in ctx.attr.native_runner:
        fail(where + "native_runner {} is an arm64_binary: under qemu each operator's share of the time is the emulator's, not the device's; profile with the host's runner (remove native_runner) or on an arm64 device".format(ctx.attr.native_runner.label))
    etrecord = ctx.attr.program[OutputGroupInfo].etrecord.to_list()[0]
    report_config, report_files = runfiles_report_config(ctx, ctx.attr.program)
    command = [
        ctx.executable._profile.short_path,
        _native_runner(ctx, program)[DefaultInfo].files_to_run.executable.short_path,
        program.pte.short_path,
        program.ptd.short_path if program.ptd else "-",
        etrecord.short_path,
        ctx.attr.method,
        str(ctx.attr.iterations),
        report_config.short_path,
    ]
    return [_run_script(
        ctx,
        "executorch_profile",
        program,
        command,
        extra_files = [etrecord, report_config] + report_files,
        extra_runfiles = ctx.attr._profile[DefaultInfo].default_runfiles,
    )]

_executorch_profile = rule(
    implementation = _executorch_profile_impl,
    executable = True,
    doc = "The rule behind executorch_profile: it checks the attributes and writes the launcher of profile.py.",
    attrs = dict({
        "program": attr.label(mandatory = True, providers = [ExecuTorchProgramInfo], doc = "The executorch_program to profile."),
        "iterations": attr.int(default = 10, doc = "Runs recorded in the ETDump."),
        "_profile": attr.label(default = Label("//rules/private:profile"), executable = True, cfg = "target"),
    }, **dict(_RUN_ATTRS, **dict(GRAPHVIZ_ATTRS, **RELEASE_ATTRS))),
)

def executorch_profile(name, program, iterations = 10, native_runner = None, method = "forward", release = None, **kwargs):
    """`bazel run` it to see where a method's time goes in ExecuTorch's native runtime.

    The native runner runs the method with an ETDump; ExecuTorch's Inspector reads it with the
    program's ETRecord (built on demand: the program's `etrecord` output group). Prints each
    operator outside delegates and each delegate's own operators with milliseconds per run and share
    of Method::execute, then each delegate's share (docs/native.md). `-- --report=FILE` also writes
    the program's report (docs/report.md) with these runs' times in its Native time section and in
    each operator's details.

        executorch_profile(
            name = "resnet_pte.profile",
            program = ":resnet_pte",
        )

    Args:
      name: the target's name.
      program: the executorch_program to profile.
      iterations: runs recorded in the ETDump.
      native_runner: the native runner: //native:et_runner, or a cc_binary of //native:runner_main
        that also links an app's own kernels (not an arm64_binary: under qemu the shares are the
        emulator's).
      method: the method to call.
      release: the ExecuTorch release whose runtime profiles it, with numerics_test's checks (an
        older one than the program's fails). Only the toolchain's release's runner records an
        ETDump: another release fails at analysis, naming it (docs/compatibility.md).
      **kwargs: passed to the target (tags, visibility, graphviz, ...).
    """
    attrs = release_test_attrs(release, None, native_runner, kwargs)
    attrs.pop("arm64_runner")  # the profile refuses an arm64 runner
    attrs.update(kwargs)
    _executorch_profile(name = name, program = program, iterations = iterations, method = method, **attrs)
