"""numerics_test: runs a .pte in the ExecuTorch runtime and its model in eager mode, and compares."""

load("//exporter:exporter_facts.bzl", "BACKENDS", "BACKEND_RECORDS", "NUMERICS_REFERENCES", "PORTABLE_RUNTIMES", "REFERENCE_RUNTIMES")
load("//rules:providers.bzl", "ExecuTorchProgramInfo", "ExecuTorchReleaseInfo", "ExportedProgramInfo", "TorchModelInfo")
load("//rules/private:arm64_binary.bzl", "ARM64_RUNNER_ATTRS", "arm64_runner_config")
load("//rules/private:backends.bzl", "check_backend_runtimes", "package_identities")
load("//rules/private:executorch_benchmark.bzl", "NATIVE_RUNNER_ATTRS")
load("//rules/private/lib:attr_checks.bzl", "check_method", "number_attr", "parse_number", "parse_tolerance")
load("//rules/private/lib:dim_sizes.bzl", "full_sizes")
load("//rules/private/lib:exporter_py.bzl", "EXPORTER_MODULES")
load("//rules/private/lib:llm_ops_runtimes.bzl", "LLM_OPS_RUNNER_ATTRS", "check_llm_ops_runtimes", "native_runner_of")
load("//rules/private/lib:releases.bzl", "RELEASE_ATTRS", "check_arm64_release", "check_test_release", "release_test_attrs")
load(":config_test.bzl", "TOLERANCE_ATTRS", "config_target_attrs", "config_test_attrs", "config_test_rule", "test_prefix", "write_test_config")
load(":numerics_values.bzl", "numerics_entries", "numerics_values")

# Where a numerics_test may run a program: ExecuTorch's Python runtime, the native runner, and
# the native runner built for arm64 Linux and started under qemu (docs/native.md, "arm64"), and
# the backends' reference runtimes (their records'), one of them through a team's own fvp_runner.
_RUNTIMES = PORTABLE_RUNTIMES + REFERENCE_RUNTIMES.keys()

# ', or a backend's reference runtime: "<runtime>" (<its backends>), ...', for messages.
_REFERENCE_TEXT = ", or a backend's reference runtime: " + ", ".join([
    "\"{}\" ({})".format(runtime, ", ".join([name for name in BACKENDS if runtime in BACKEND_RECORDS[name]["reference_runtimes"]]))
    for runtime in REFERENCE_RUNTIMES
]) if REFERENCE_RUNTIMES else ""

# The reference runtimes that a team's fvp_runner reaches, and those the test runs itself.
_FVP = "fvp"
_OWN_REFERENCE_RUNTIMES = [r for r in REFERENCE_RUNTIMES if not REFERENCE_RUNTIMES[r]["team_runner"]]

def _check_inputs(where, listed, spec):
    for i, sizes in enumerate(listed):
        if type(sizes) != "dict" or not sizes:
            fail(where + "inputs[{}] must be a dict of dim name to size, e.g. {{\"batch\": 7}}".format(i))
        full_sizes("{}inputs[{}]".format(where, i), sizes, spec)

def _check_steps(ctx, where, program, steps):
    """The steps of a stateful test: methods of the program, sizes in range, known inputs."""
    if json.decode(ctx.attr.inputs_json) or ctx.attr.method != "forward":
        fail(where + "steps name their own methods and sizes; remove inputs and method")
    if ctx.attr.reference != "eager":
        fail(where + "steps compare with the eager model, which keeps its state as the program does; remove reference")
    models = {}
    for i, step in enumerate(steps):
        method = step.get("method")
        check_method(where, "steps[{}] calls method".format(i), method, program, owner = "program {}".format(program.label))
        spec = program.methods[method].spec
        full_sizes(where + "steps[{}].dims".format(i), step["dims"], spec)
        names = [entry["name"] for entry in spec.spec["inputs"]]
        for name, value in step["values"].items():
            if name not in names:
                fail(where + "steps[{}].values names input {}, which shape_spec {} does not have; use one of {}".format(i, repr(name), spec.label, names))
            if type(value) not in ("int", "float", "bool"):
                fail(where + "steps[{}].values[{}] is a {}; give an int, float or bool".format(i, repr(name), type(value)))
        models[str(program.methods[method].model.label)] = True
    if len(models) > 1 and not ctx.attr.model:
        fail(where + "the steps' methods come from different models ({}), and one eager module must keep the state; set model".format(", ".join(sorted(models))))

def _judging(ctx, where):
    """How outputs are judged: the floors and tolerances as numbers, None when unset."""
    return {
        "min_sqnr_db": parse_number(where, "min_sqnr_db", ctx.attr.min_sqnr_db, what = "a level in dB", example = "20", signed = True),
        "min_top1_agreement": parse_number(where, "min_top1_agreement", ctx.attr.min_top1_agreement, what = "a fraction", example = "0.9", at_most = 1),
        "rtol": parse_tolerance(where, "rtol", ctx.attr.rtol),
        "atol": parse_tolerance(where, "atol", ctx.attr.atol),
    }

def _check(ctx, where, program, steps):
    """Every check of the test's attributes, before anything is built.

    Returns:
      (the method under test, _judging's numbers).
    """
    if steps:
        _check_steps(ctx, where, program, steps)
    method = steps[0]["method"] if steps else ctx.attr.method
    check_method(where, "method", method, program, owner = "program {}".format(program.label))
    _check_inputs(where, json.decode(ctx.attr.inputs_json), program.methods[method].spec)
    if ctx.attr.reference != "eager" and ctx.attr.model:
        fail(where + "model is only used with reference = \"eager\"; remove it or set reference = \"eager\"")
    judging = _judging(ctx, where)
    runtimes = ctx.attr.runtimes
    release = check_test_release(where, program, ctx.attr.release_name, ctx.attr.any_release_order)
    check_arm64_release(where, release, "arm64" in runtimes)
    if not runtimes or [r for r in runtimes if r not in _RUNTIMES]:
        fail(where + "runtimes = {} names no runtime or an unknown one; use [\"python\", \"native\"] or a part of it, \"arm64\" for the native runner built for arm64 (under qemu){}".format(runtimes, _REFERENCE_TEXT))
    check_backend_runtimes(where, runtimes, program.backends if steps else program.method_backends[method])
    check_llm_ops_runtimes(where, program, ctx.attr.arm64_runner[0].label if "arm64" in runtimes and ctx.attr.arm64_runner else None)
    if steps and "python" not in runtimes:
        fail(where + "a test with steps runs in the Python runtime too; add \"python\" to runtimes")
    _check_arm64_inputs(ctx, where, program.methods[method].spec, steps)
    if (_FVP in runtimes) != (ctx.attr.fvp_runner != None):
        fail(where + ("runtime fvp needs {}, which is not on this machine; set fvp_runner = \"//your:fvp_runner\" (a runner that takes //native:et_runner's command line and runs the program on the FVP), or runtimes = {}".format(REFERENCE_RUNTIMES[_FVP]["title"], _OWN_REFERENCE_RUNTIMES[:1]) if _FVP in runtimes else "fvp_runner is set, and runtimes = {} has no fvp; add \"fvp\" to runtimes or remove fvp_runner".format(runtimes)))
    return method, judging, release

def _check_arm64_inputs(ctx, where, spec, steps):
    arm64_inputs = json.decode(ctx.attr.arm64_inputs_json)
    if not arm64_inputs:
        return
    if "arm64" not in ctx.attr.runtimes:
        fail(where + "arm64_inputs picks the cases of the arm64 run, and runtimes = {} has none; add \"arm64\" to runtimes or remove arm64_inputs".format(ctx.attr.runtimes))
    if steps:
        fail(where + "arm64_inputs picks cases, and steps run in order on every runtime; remove arm64_inputs")
    _check_inputs(where + "arm64_", arm64_inputs, spec)

def _config(ctx, program, method, steps, judging, release):
    """(the config numerics.py reads, the Files it names, the model's Files).

    The Files include the test's values (numerics_values.bzl), which its build action computes;
    the programs and the model stay in the runfiles for the explanation of a failure.
    """
    config, files, model_files = numerics_entries(ctx, program, method, steps, runfiles = True)
    config.update(judging)
    config.update(
        label = ctx.attr.test_label,
        program = str(program.label),
        quantized = program.methods[method].quantization != None,
        # The tolerances' defaults: the backends of the method under test (all of them for steps).
        backends = program.backends if steps else program.method_backends[method],
        release = release,
        program_release = program.release,
    )
    values = numerics_values(ctx, program, method, steps, ctx.attr.release[ExecuTorchReleaseInfo] if ctx.attr.release else None)
    config.update({key: f.short_path for key, f in values.items()})
    return config, files + values.values(), model_files

def _numerics_test_impl(ctx):
    program = ctx.attr.program[ExecuTorchProgramInfo]
    steps = json.decode(ctx.attr.steps_json)
    method, judging, release = _check(ctx, test_prefix("numerics_test", ctx), program, steps)
    config, files, model_files = _config(ctx, program, method, steps, judging, release)
    runners = ctx.runfiles()
    native_runner = native_runner_of(program, ctx.attr.native_runner, ctx.attr._llm_ops_runner)
    if "native" in ctx.attr.runtimes:
        runners = runners.merge(native_runner[DefaultInfo].default_runfiles)
        config["native_runner"] = native_runner[DefaultInfo].files_to_run.executable.short_path
    if "arm64" in ctx.attr.runtimes:
        runners = runners.merge(arm64_runner_config(ctx, config))
    if "native" in ctx.attr.runtimes or "arm64" in ctx.attr.runtimes:
        config["native_runner_label"] = str(native_runner.label)
    if ctx.attr.fvp_runner:
        runners = runners.merge(ctx.attr.fvp_runner[DefaultInfo].default_runfiles)
        config.update(fvp_runner = ctx.executable.fvp_runner.short_path, fvp_runner_label = str(ctx.attr.fvp_runner.label))

    config, files = _reference_config(ctx, program, config, files)
    return write_test_config(ctx, config, files, transitive_files = model_files, runfiles = runners)

def _reference_config(ctx, program, config, files):
    """Adds what the backends' packages and reference runtimes need to the config and its files.

    The packages (a reference runtime's own, or the runtime library a backend's delegates load in
    the native runner), and the program's files a reference runtime reads (its program_files).
    """
    reference = [r for r in ctx.attr.runtimes if r in REFERENCE_RUNTIMES]
    if reference or ("native" in ctx.attr.runtimes and program.backend_packages):
        config["backend_packages"] = [f.short_path for f in package_identities(program.backend_packages)]
        files = files + program.backend_packages
    program_files = {}
    for group in [g for r in reference for g in REFERENCE_RUNTIMES[r]["program_files"]]:
        found = getattr(ctx.attr.program[OutputGroupInfo], group).to_list()
        if found:
            program_files[group] = found[0].short_path
            files = files + found
    if program_files:
        config["program_files"] = program_files
    return config, files

_numerics_test = config_test_rule(
    implementation = _numerics_test_impl,
    doc = "The rule behind numerics_test: it checks the attributes, computes the values it compares, and writes the JSON config that exporter/checks/numerics.py reads and the launcher that runs it.",
    exporter = True,
    attrs = config_test_attrs({
        "program": attr.label(mandatory = True, providers = [ExecuTorchProgramInfo], doc = "The executorch_program to run."),
        "model": attr.label(providers = [TorchModelInfo], doc = "The torch_model to compare with; default: the program's own."),
        "reference": attr.string(
            default = "eager",
            values = NUMERICS_REFERENCES,
            doc = "Compare with the eager model, the .pt2's module(), or reference_program's module().",
        ),
        "reference_program": attr.label(
            providers = [ExportedProgramInfo],
            doc = "With reference = \"program\": the torch_export (e.g. the float program) to compare with.",
        ),
        "min_sqnr_db": attr.string(doc = "SQNR floor in dB per output and case; empty for none."),
        "min_top1_agreement": attr.string(doc = "Floor on the fraction of rows whose argmax agrees; empty for none."),
        "inputs_json": attr.string(default = "[]", doc = "Extra shapes as JSON (set by the macro)."),
        "method": attr.string(default = "forward", doc = "The program's method to run."),
        "steps_json": attr.string(default = "[]", doc = "steps as JSON (set by the macro)."),
        "runtimes": attr.string_list(default = ["python", "native"], doc = "Where the program runs: ExecuTorch's Python runtime, its native (C++) runtime, that runtime built for arm64 under qemu, or a part."),
        "arm64_inputs_json": attr.string(default = "[]", doc = "The arm64 run's only cases as JSON, or [] for all (set by the macro)."),
        "fvp_runner": attr.label(
            executable = True,
            cfg = "exec",
            doc = "With \"fvp\" in runtimes: a runner that takes //native:et_runner's command line and runs the program on Arm's Corstone FVP (a team's own; none is here; docs/backends.md).",
        ),
    }, TOLERANCE_ATTRS, NATIVE_RUNNER_ATTRS, LLM_OPS_RUNNER_ATTRS, ARM64_RUNNER_ATTRS, RELEASE_ATTRS),
)

def step(method = "forward", dims = {}, values = {}):
    """One call of a stateful numerics_test: numerics_test(steps = [step(...), ...]).

    Args:
      method: the program's method to call.
      dims: {dim name: size} for this call; unnamed dims take their example.
      values: {input name: int, float or bool}: inputs given a value instead of seeded data (a
        tensor input is filled with it), e.g. the position of a decode step: {"pos": 3}.

    Returns:
      The step, as numerics_test takes it.
    """
    return {"method": method, "dims": dims, "values": values}

def numerics_test(name, program, model = None, rtol = None, atol = None, inputs = [], reference = "eager", min_sqnr_db = None, min_top1_agreement = None, method = "forward", steps = [], runtimes = None, native_runner = None, arm64_inputs = [], fvp_runner = None, release = None, **kwargs):
    """Tests that `program` (a .pte) computes what its model computes, on seeded inputs.

    The shapes: every dynamic dim at its min, its example and its max, plus `inputs`.

    Args:
      name: the test's name.
      program: an executorch_program target.
      model: a torch_model to compare with; defaults to the model the program was exported from.
      rtol: relative tolerance (a number or a string such as "1e-3"); default 1e-4 for the
        portable runtime, 1e-3 with XNNPACK.
      atol: absolute tolerance; default 1e-5 portable, 1e-4 with XNNPACK.
      inputs: extra shapes, a list of {dim name: size} dicts; unnamed dims take their example.
      reference: "eager" (the model's nn.Module), "exported" (the .pt2's module()), or the label
        of another torch_export, e.g. the float program a quantized one came from.
      min_sqnr_db: signal-to-quantization-noise floor in dB, for every output in every case.
        With it (or min_top1_agreement), rtol/atol apply only if set. A quantized program with
        none of the four gets min_sqnr_db = 20 (docs/quantization.md says why).
      min_top1_agreement: floor on the fraction of rows (over all cases) whose argmax over the
        last axis agrees with the reference, for outputs of 2 or more axes, e.g. 0.9.
      method: the program's method to run, for a program of several methods; its shape spec
        and exported program are that method's.
      steps: instead of the cases above, a sequence of calls for a program that keeps state in
        buffers (a KV cache): a list of step(method, dims, values), run in order on one loaded
        program and on one eager model, comparing every call (docs/stateful.md), e.g.
        [step(method = "decode", values = {"pos": i}) for i in range(8)].
      runtimes: where the program runs: ["python", "native"] (the default) runs every case in
        ExecuTorch's Python runtime and again in its native C++ runtime (the one apps link,
        docs/native.md); ["native"] for a program whose kernels only an app's runner has. With
        "arm64", once more in native_runner built for arm64 Linux, under qemu, judged by the
        same tolerances and set beside the x86-64 runner's outputs (docs/native.md, "arm64":
        it needs the cross packages; test without --platforms). Or a backend's reference runtime (docs/backends.md).
      native_runner: a cc_binary to run it natively (default //native:et_runner), or one that also
        links an app's own kernels (models/volumetric); the arm64 run builds it for arm64.
      arm64_inputs: with "arm64" in runtimes, the only cases the arm64 run takes, as
        {dim name: size} dicts (each also runs in the other runtimes), e.g. [{"batch": 1}]: an
        emulated call is 10x (portable kernels) to 400x (XNNPACK) slower; default: every case.
      fvp_runner: with "fvp" in runtimes, a team's runner of Arm's Corstone FVP (docs/backends.md).
      release: the ExecuTorch release whose runtimes run it, e.g. "1.4" (default: the toolchain's,
        which must be the program's); an older one than the program's fails (docs/compatibility.md).
      **kwargs: passed to the test (tags, size, timeout, ...).
    """
    named = reference not in ("eager", "exported")
    _numerics_test(
        program = program,
        model = model,
        reference = "program" if named else reference,
        reference_program = reference if named else None,
        min_sqnr_db = number_attr(min_sqnr_db),
        min_top1_agreement = number_attr(min_top1_agreement),
        rtol = number_attr(rtol),
        atol = number_attr(atol),
        inputs_json = json.encode(inputs),
        method = method,
        steps_json = json.encode(steps),
        runtimes = runtimes,
        arm64_inputs_json = json.encode(arm64_inputs),
        fvp_runner = fvp_runner,
        **dict(release_test_attrs(release, runtimes, native_runner, kwargs), **config_target_attrs(name, EXPORTER_MODULES["steps" if steps else "numerics"], kwargs))
    )
