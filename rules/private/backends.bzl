"""Backends as values: "xnnpack", or a backend with its options: openvino(...), coreml(...),
tosa(...) or ethos_u(...).

A value is a string, so that it goes wherever `backends` went before (one list, a dict per
method, executorch_programs' variants, llm_program): the backend's name, then its options as
JSON, `openvino{"device":"GPU"}`. The rules check each one at analysis against the exporter's
facts (BACKENDS, BACKEND_OPTIONS, from exporter/core/backends.py) and write the options, defaults
filled in, into the lowering's config. A backend with a lock of its own (BACKENDS_WITH_LOCK)
brings the label of its packages' repository, which the macros add to the targets that name it:
nothing else refers to that repository, so only those builds fetch it.
"""

load("//exporter:exporter_facts.bzl", "BACKENDS", "BACKENDS_WITH_LOCK", "BACKEND_OPTIONS", "BACKEND_RUNTIMES")

def backend(name, **options):
    """A backend with options, as `backends` takes it; openvino(...) and coreml(...) call it.

    Args:
      name: the backend, e.g. "openvino".
      **options: its options; the rule checks names and values at analysis.

    Returns:
      The backend's value, a string: the name, then the options as JSON.
    """
    if not options:
        return name
    return name + json.encode({key: options[key] for key in sorted(options.keys())})

def openvino(**options):
    """OpenVINO (Intel CPUs, GPUs and NPUs), with its options (docs/backends.md).

    Args:
      **options: device: "CPU" (default), "GPU" or "NPU"; precision: OpenVINO's inference
        precision hint, "f32" (default: the error stays at XNNPACK's order on every CPU),
        "bf16" or "f16".

    Returns:
      The backend's value for `backends`, e.g. backends = [openvino(device = "GPU")].
    """
    return backend("openvino", **options)

def coreml(**options):
    """Core ML (iPhones, iPads and Macs), with its options (docs/backends.md).

    Args:
      **options: compute_units: "all" (default), "cpu_only", "cpu_and_gpu" or "cpu_and_ne";
        precision: "fp16" (default) or "fp32"; minimum_deployment_target: "iOS17" (default),
        "iOS15", "iOS16", "iOS18" or "iOS26".

    Returns:
      The backend's value for `backends`, e.g. backends = [coreml(precision = "fp32")].
    """
    return backend("coreml", **options)

def tosa(**options):
    """TOSA 1.0 (Arm's Tensor Operator Set Architecture), with its profile (docs/backends.md, "Arm").

    Args:
      **options: profile: "FP" (default; a float model) or "INT" (a model quantized with
        torch_quantize(quantizer = "tosa")).

    Returns:
      The backend's value for `backends`, e.g. backends = [tosa(profile = "INT")].
    """
    return backend("tosa", **options)

def ethos_u(**options):
    """Arm's Ethos-U NPUs, compiled by Vela (docs/backends.md, "Arm").

    They run integer operators only: quantize the model with torch_quantize(quantizer = "ethos_u").

    Args:
      **options: target: "ethos-u55-128" (default), "ethos-u55-32", "-64", "-256", or
        "ethos-u85-128" to "ethos-u85-2048"; system_config and memory_mode: a system config and
        a memory mode of Vela's Arm/vela.ini, or "default" (ExecuTorch's choice per NPU family).

    Returns:
      The backend's value for `backends`, e.g. backends = [ethos_u(target = "ethos-u85-256")].
    """
    return backend("ethos_u", **options)

def backend_name(value):
    """The backend a value names, unchecked (for the macros)."""
    brace = value.find("{")
    return value if brace < 0 else value[:brace]

def parse_backend(where, value):
    """(name, {option: value} with every option, defaults filled in) of a checked value.

    Args:
      where: the message prefix naming the target.
      value: one item of `backends`.

    Returns:
      The backend's name and its options.
    """
    name = backend_name(value)
    if name not in BACKENDS:
        fail(where + "backends has {}; use one of {} (or [] for the portable runtime), e.g. openvino(device = \"CPU\")".format(repr(value), BACKENDS))
    given = json.decode(value[len(name):]) if len(value) > len(name) else {}
    allowed = BACKEND_OPTIONS[name]
    for option, chosen in given.items():
        if option not in allowed:
            fail(where + "backend {} has no option {}; {}".format(name, repr(option), "its options are {}".format(sorted(allowed.keys())) if allowed else "it takes none"))
        if chosen not in allowed[option]:
            fail(where + "{}({} = {}) is not allowed; use one of {}".format(name, option, repr(chosen), allowed[option]))
    chosen = {option: given.get(option, values[0]) for option, values in allowed.items()}
    if name == "ethos_u":
        _check_ethos_u(where, chosen)
    return name, chosen

def _check_ethos_u(where, options):
    """Fails when Vela's system config or memory mode is for another NPU family than the target.

    Measured, Vela compiles an Ethos-U55 program with an Ethos_U85 system config without a word,
    and fails on a U55 with a Dedicated_Sram memory mode deep inside the lowering.
    """
    family = "U55" if options["target"].startswith("ethos-u55") else "U85"
    config = options["system_config"]
    if config != "default" and not config.startswith("Ethos_{}_".format(family)):
        own = [c for c in BACKEND_OPTIONS["ethos_u"]["system_config"] if c.startswith("Ethos_{}_".format(family))]
        fail(where + "ethos_u(system_config = {}) is for another NPU than target {}; use one of {} or \"default\"".format(repr(config), repr(options["target"]), own))
    if family == "U55" and options["memory_mode"].startswith("Dedicated_Sram"):
        fail(where + "ethos_u(memory_mode = {}) needs an NPU with SRAM of its own, which an Ethos-U55 has not; use \"Shared_Sram\", \"Sram_Only\" or \"default\"".format(repr(options["memory_mode"])))

def parse_backends(where, values, options):
    """The names of `values`, checked; adds each backend's options to `options` ({name: dict}).

    Args:
      where: the message prefix naming the target.
      values: a list of backend values.
      options: {backend name: options} so far; a backend must have the same options everywhere.

    Returns:
      The backends' names.
    """
    names = []
    for value in values:
        name, chosen = parse_backend(where, value)
        if name in names:
            fail(where + "backends names {} twice; name each backend once".format(name))
        if name in options and options[name] != chosen:
            fail(where + "backend {} has options {} in one method and {} in another; a program takes one set of options per backend".format(name, options[name], chosen))
        if chosen:
            options[name] = chosen
        names.append(name)
    return names

def backend_packages_labels(values):
    """The labels of the package repositories of the backends among `values` (for macros).

    Args:
      values: backend values, unchecked.

    Returns:
      A list of labels, e.g. ["@torch_export_backend_openvino//:packages"].
    """
    names = {backend_name(v): None for v in values}
    repositories = {BACKENDS_WITH_LOCK[name]: None for name in BACKENDS_WITH_LOCK if name in names}
    return ["@torch_export_backend_{}//:packages".format(repository) for repository in repositories]

# The backends whose compiled code is for the CPU that lowered it: OpenVINO's blob carries that
# CPU's best instruction set and loads only on a CPU with the same (docs/caching.md,
# "Per-machine programs"). Their actions stay off remote caches and executors. TOSA's and Vela's
# output is for the Arm target named in the options, not for the lowering machine's CPU.
PER_MACHINE_BACKENDS = ["openvino"]

def per_machine(names):
    """Whether a program of these backends (names) is per machine."""
    return bool([name for name in names if name in PER_MACHINE_BACKENDS])

def runtimes_here(backends):
    """The numerics_test runtimes that can run a program of `backends` on this machine.

    Args:
      backends: backend names ([] is the portable runtime, which every runtime runs).

    Returns:
      A list, e.g. ["python"] for an OpenVINO program, [] for a Core ML one.
    """
    runtimes = BACKEND_RUNTIMES["xnnpack"]
    for name in backends:
        runtimes = [r for r in runtimes if r in BACKEND_RUNTIMES.get(name, [])]
    return runtimes

# The backends that compile the weights into their delegate blob, inside the .pte: ExecuTorch
# writes none of them to a .ptd (docs/backends.md, "Every program form"). TOSA's blob is the TOSA
# graph with its constants (measured: the lowering leaves no named data), Ethos-U's is Vela's
# command stream with the weights it packed for the NPU.
WEIGHTS_IN_BLOB_BACKENDS = ["openvino", "coreml", "tosa", "ethos_u"]

def check_backend_weights(where, weights, names):
    """Fails in one line when weights = "external" meets a backend that keeps its weights in its blob.

    Args:
      where: the message prefix naming the target.
      weights: the program's weights attribute.
      names: the program's backend names.
    """
    inside = [name for name in names if name in WEIGHTS_IN_BLOB_BACKENDS]
    if weights == "external" and inside:
        fail(where + "weights = \"external\" cannot move {}'s weights to a .ptd: {} compiles them into its delegate blob in the .pte; set weights = \"inline\" (or backends = [\"xnnpack\"] for a separate .ptd)".format(inside[0], inside[0]))

# The backends that take static shapes only. OpenVINO's openvino_compile types each input of its
# partition from an example value, and a dynamic size reaches it as a SymInt, which has no type
# (the LLM's sequence length: AttributeError 'SymInt' object has no attribute 'type'); with a
# dynamic batch only, the lowering passes and the delegate returns the largest batch's output
# whatever the input's (docs/backends.md, "The zoo's programs per backend"). Arm's lowering fails on
# a dynamic batch in one of its graph passes (measured with TOSA-1.0+FP; Ethos-U lowers through
# the same TOSA graph).
STATIC_SHAPE_BACKENDS = ["openvino", "tosa", "ethos_u"]

def check_static_shapes(where, method, backends, spec_label, dims):
    """Fails in one line when a method lowered for a static-shape backend has dynamic dims.

    Args:
      where: the message prefix naming the program.
      method: the method's name.
      backends: the method's backend names.
      spec_label: the label of the shape spec it was exported with.
      dims: that spec's dynamic dims ({name: ...}).
    """
    static = [name for name in backends if name in STATIC_SHAPE_BACKENDS]
    if static and dims:
        fail(where + "method {} is lowered for {}, which takes static shapes only, but its export's shape spec {} has dynamic dims {}; export it with a shape_spec of fixed sizes (no dims) for this program".format(method, static[0], spec_label, sorted(dims.keys())))

# The backends no runtime of this machine runs: where their programs run, and where to test them.
RUNS_ONLY_ON = {
    "coreml": ("Apple hardware", "a Mac or an iPhone"),
    "ethos_u": ("an Ethos-U NPU", "a board or Arm's Corstone FVP"),
    "tosa": ("a TOSA device", "a TOSA device"),
}

# Runtimes beside ExecuTorch's that run a backend's delegate in a reference of the backend: the
# TOSA reference model (tosa-tools) runs a TOSA program's graph, or the INT TOSA graph Vela
# compiled an Ethos-U delegate from, and the quantize and dequantize operators around it
# (exporter/checks/tosa_reference.py). runtimes_here() leaves them out: an
# executorch_benchmark or the zoo's arm64 check has nothing to time or run there.
# "fvp" runs an Ethos-U program's command stream on Arm's Corstone FVP, through the runner a
# team names (numerics_test's fvp_runner); no FVP is on this machine.
REFERENCE_RUNTIMES = {"tosa": ["tosa_reference"], "ethos_u": ["tosa_reference", "fvp"]}

def runs_only_on(name):
    """Where a program of backend `name` runs, for messages: "Apple hardware" for coreml."""
    return RUNS_ONLY_ON.get(name, ("its own hardware", "its device"))[0]

def check_backend_runtimes(where, runtimes, backends):
    """Fails in one line when a runtime of a numerics_test cannot run a program of `backends`.

    Core ML programs run on Apple hardware only, Ethos-U's on the NPU; OpenVINO's run in ExecuTorch's Python runtime
    and the native runner, but not on arm64 (OpenVINO's packages here are for x86-64).

    Args:
      where: the message prefix naming the test.
      runtimes: the test's runtimes.
      backends: the backend names of the method under test.
    """
    reference = [r for r in runtimes if r in [x for listed in REFERENCE_RUNTIMES.values() for x in listed]]
    if "fvp" in runtimes and "ethos_u" not in backends:
        fail(where + "runtime fvp runs an Ethos-U program on Arm's Corstone FVP, and this method is lowered for {}; remove fvp from runtimes".format(backends))
    if reference and not [name for name in backends if name in REFERENCE_RUNTIMES]:
        fail(where + "runtime {} runs a TOSA program's graph, and this method is lowered for {}; remove {} from runtimes, or lower the program with backends = [tosa(...)]".format(reference[0], backends, reference[0]))
    for name in backends:
        allowed = BACKEND_RUNTIMES.get(name, []) + REFERENCE_RUNTIMES.get(name, [])
        if not allowed:
            place, device = RUNS_ONLY_ON.get(name, ("its own hardware", "its device"))
            article = "an" if name[0] in "aeiou" else "a"
            fail(where + "{} {} program runs on {} only, and no runtime of this machine can run it; remove this numerics_test and test the program on {} (docs/backends.md)".format(article, name, place, device))
        wrong = [r for r in runtimes if r not in allowed]
        here = [r for r in allowed if r != "fvp"]  # the FVP needs a team's runner: not advised
        if wrong:
            fail(where + "runtimes {} cannot run a program lowered for {}, which runs here in {} only{} (docs/backends.md); set runtimes = {}".format(wrong, name, here, " (and on Arm's Corstone FVP with fvp_runner)" if "fvp" in allowed else "", here))
