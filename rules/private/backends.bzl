"""Backends as values: "xnnpack", or a backend with its options: openvino(...), coreml(...),
tosa(...) or ethos_u(...).

A value is a string, so that it goes wherever `backends` went before (one list, a dict per
method, executorch_programs' variants, llm_program): the backend's name, then its options as
JSON, `openvino{"device":"GPU"}`. The rules check each one at analysis against the backends'
records (BACKENDS, BACKEND_OPTIONS and BACKEND_RECORDS, generated from exporter/core/backends.py)
and write the options, defaults filled in, into the lowering's config. A backend with a lock of
its own brings the label of its packages' repository, which the macros add to the targets that
name it: nothing else refers to that repository, so only those builds fetch it.

Besides the helpers below (a backend with options has one, exported by defs.bzl), and the checks
of options that depend on one another, everything here reads the records: no other rule names a
backend.
"""

load("//exporter:exporter_facts.bzl", "BACKENDS", "BACKEND_OPTIONS", "BACKEND_RECORDS", "PORTABLE_RUNTIMES", "REFERENCE_RUNTIMES")

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
      **options: device: "CPU" (default), "GPU" or "NPU"; precision: the inference precision
        hint the lowering compiles with, "f32" (default), "bf16" or "f16". ExecuTorch's runtime
        imports the program without it, so a CPU with bf16 units computes in bf16 whatever it
        says (docs/backends.md).

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

def packages_label(name):
    """The label of backend `name`'s package repository, or None for a backend without a lock."""
    lock = BACKEND_RECORDS[name]["lock"] if name in BACKEND_RECORDS else None
    return "@torch_export_backend_{}//:packages".format(lock) if lock else None

def package_identities(files):
    """The identity files among the files of package repositories (their `:packages`).

    An action's config names these, while the action declares every file
    (toolchain/layered_locks.bzl).

    Args:
      files: the Files of some repositories' `:packages`.

    Returns:
      Their identity.txt Files, in order.
    """
    return [f for f in files if f.owner.name == "identity.txt"]

def backend_packages_labels(values):
    """The labels of the package repositories of the backends among `values` (for macros).

    Args:
      values: backend values, unchecked.

    Returns:
      A list of labels, e.g. ["@torch_export_backend_openvino//:packages"].
    """
    labels = [packages_label(backend_name(v)) for v in values]
    return {label: None for label in labels if label}.keys()

def per_machine(names):
    """Whether a program of these backends (names) is per machine.

    Its compiled code is then for the CPU that lowered it, so its actions stay off remote caches
    and executors (docs/caching.md, "Per-machine programs").
    """
    return bool([name for name in names if BACKEND_RECORDS[name]["per_machine"]])

def runtimes_here(backends):
    """The numerics_test runtimes that can run a program of `backends` on this machine.

    Args:
      backends: backend names ([] is the portable runtime, which every runtime runs).

    Returns:
      A list, e.g. ["python", "native"] for an OpenVINO program, [] for a Core ML one.
    """
    runtimes = PORTABLE_RUNTIMES
    for name in backends:
        runtimes = [r for r in runtimes if r in BACKEND_RECORDS[name]["runtimes"]]
    return runtimes

def reference_runtimes(name):
    """The runtimes that run backend `name`'s delegates in a reference of it, e.g. ["tosa_reference"].

    They run no ExecuTorch, so runtimes_here leaves them out.
    """
    return BACKEND_RECORDS[name]["reference_runtimes"]

def check_backend_weights(where, weights, names):
    """Fails in one line when weights = "external" meets a backend that keeps its weights in its blob.

    Args:
      where: the message prefix naming the target.
      weights: the program's weights attribute.
      names: the program's backend names.
    """
    inside = [name for name in names if BACKEND_RECORDS[name]["weights_in_blob"]]
    if weights == "external" and inside:
        fail(where + "weights = \"external\" cannot move {}'s weights to a .ptd: {} compiles them into its delegate blob in the .pte; set weights = \"inline\" (or backends = [\"xnnpack\"] for a separate .ptd)".format(inside[0], inside[0]))

def takes_static_shapes_only(names):
    """Whether a backend among `names` takes static shapes only (its lowering fails on a dynamic size)."""
    return bool([name for name in names if BACKEND_RECORDS[name]["static_shapes"]])

def check_static_shapes(where, method, backends, spec_label, dims):
    """Fails in one line when a method lowered for a static-shape backend has dynamic dims.

    Args:
      where: the message prefix naming the program.
      method: the method's name.
      backends: the method's backend names.
      spec_label: the label of the shape spec it was exported with.
      dims: that spec's dynamic dims ({name: ...}).
    """
    static = [name for name in backends if BACKEND_RECORDS[name]["static_shapes"]]
    if static and dims:
        fail(where + "method {} is lowered for {}, which takes static shapes only, but its export's shape spec {} has dynamic dims {}; export it with a shape_spec of fixed sizes (no dims) for this program".format(method, static[0], spec_label, sorted(dims.keys())))

def integer_only(name, options):
    """Whether a backend with these options runs integer operators only (its record's integer_only).

    A float program lowered for such a backend would stay on the CPU.

    Args:
      name: the backend.
      options: its options, every one (as parse_backend gives them; {} for none).

    Returns:
      True or False.
    """
    rule = BACKEND_RECORDS[name]["integer_only"]
    if type(rule) == "bool":
        return rule
    return not [key for key, value in rule.items() if options.get(key) != value]

def integer_only_text(name, options):
    """The backend as the integer-only message names it: "ethos_u", or "tosa(profile = \"INT\")".

    Args:
      name: the backend.
      options: its options, every one.

    Returns:
      The name, with the options that make it integer-only.
    """
    rule = BACKEND_RECORDS[name]["integer_only"]
    if type(rule) == "bool":
        return name
    return "{}({})".format(name, ", ".join(["{} = {}".format(key, json.encode(options[key])) for key in sorted(rule.keys())]))

def runs_only_on(name):
    """Where a program of backend `name` runs, for messages: "Apple hardware" for coreml."""
    return (BACKEND_RECORDS[name]["runs_on"] or ["its own hardware", "its device"])[0]

def test_device(name):
    """What to test a program of backend `name` on, when no runtime here runs it: "a Mac or an iPhone"."""
    return (BACKEND_RECORDS[name]["runs_on"] or ["its own hardware", "its device"])[1]

def _article(text):
    return "an" if text[0].lower() in "aeiou" else "a"

def _check_reference_runtimes(where, runtimes, backends):
    """Fails when a reference runtime is asked of a method none of whose backends it runs."""
    for runtime in [r for r in runtimes if r in REFERENCE_RUNTIMES]:
        offering = [name for name in BACKENDS if runtime in BACKEND_RECORDS[name]["reference_runtimes"]]
        if not [name for name in backends if name in offering]:
            fail(where + "runtime {} runs {}, and this method is lowered for {}; remove {} from runtimes, or lower the program with backends = [{}(...)]".format(runtime, REFERENCE_RUNTIMES[runtime]["runs"], backends, runtime, offering[0]))

def _team_runtimes_text(allowed):
    """" (and on Arm's Corstone FVP with fvp_runner)" for the reference runtimes a team's runner reaches."""
    return "".join([" (and on {} with {}_runner)".format(REFERENCE_RUNTIMES[r]["title"], r) for r in allowed if REFERENCE_RUNTIMES.get(r, {}).get("team_runner")])

def check_backend_runtimes(where, runtimes, backends):
    """Fails in one line when a runtime of a numerics_test cannot run a program of `backends`.

    Each backend's record says where its programs run here (its runtimes and reference
    runtimes), and where they run when nothing here does.

    Args:
      where: the message prefix naming the test.
      runtimes: the test's runtimes.
      backends: the backend names of the method under test.
    """
    _check_reference_runtimes(where, runtimes, backends)
    for name in backends:
        record = BACKEND_RECORDS[name]
        allowed = record["runtimes"] + record["reference_runtimes"]
        if not allowed:
            place, device = record["runs_on"] or ["its own hardware", "its device"]
            fail(where + "{} {} program runs on {} only, and no runtime of this machine can run it; remove this numerics_test and test the program on {} (docs/backends.md)".format(_article(name), name, place, device))
        wrong = [r for r in runtimes if r not in allowed]
        here = [r for r in allowed if not REFERENCE_RUNTIMES.get(r, {}).get("team_runner")]  # a team's runner: not advised
        if wrong:
            fail(where + "runtimes {} cannot run a program lowered for {}, which runs here in {} only{} (docs/backends.md); set runtimes = {}".format(wrong, name, here, _team_runtimes_text(allowed), here))
