"""The lowering that executorch_program and llm_program share.

Each rule's implementation is `lower_program(ctx, semantics)`, as rules_python's executables are
py_executable_base_impl(ctx, semantics): the semantics (lowering_semantics) say what the rule
adds, an LLM's runner methods for llm_program. lower_program checks the attributes first, then
builds in a straight line, as rules_oci's image.bzl does: the config, the lowering, the ETRecord
action and the providers. Each rule's macro turns its arguments into PROGRAM_ATTRS with
program_attrs.
"""

load("//exporter:exporter_facts.bzl", "BACKEND_RECORDS", "CONFIG_DEFAULTS", "DEFAULT_RELEASE", "WEIGHTS")
load("//exporter:repository_facts.bzl", "KERNEL_LIBRARIES")
load("//rules:providers.bzl", "ExecuTorchReleaseInfo", "ExportedProgramInfo", "FoundationWeightsInfo", "executorch_program_info")
load("//rules/private:backends.bzl", "backend_packages_labels", "check_backend_weights", "check_static_shapes", "integer_only", "integer_only_text", "package_identities", "parse_backends", "per_machine")
load("//rules/private:program_report.bzl", "GRAPHVIZ_ATTRS", "program_report")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")
load(":attr_checks.bzl", "check_one_of", "message_prefix")
load(":config_entries.bzl", "exported_config")
load(":exporter_action.bzl", "DEADLINE_ATTRS", "run_exporter", "warm_up_attrs")
load(":linear_expr.bzl", "is_identifier")
load(":releases.bzl", "check_release", "newer_than", "release_label")

# The lowering's defaults (exporter/actions/registry.py's LowerConfig).
LOWER_DEFAULTS = CONFIG_DEFAULTS["lower"]
DEFAULT_KERNELS = [library["name"] for library in LOWER_DEFAULTS["kernels"]]

# The files backends write beside the .pte (their records' outputs): each an output group of
# every program, empty unless the program is lowered for that backend.
_BACKEND_OUTPUTS = sorted({role: None for record in BACKEND_RECORDS.values() for role in record["outputs"]}.keys())

# The constant method every program gets: its methods' input names, dtypes, shapes and dims.
INPUT_SCHEMA = "input_schema"

def _method_config(exported):
    # For messages: the spec names the sizes, the export options are the fixes to offer.
    return dict(exported_config(exported, spec_label = True), export = exported.options)

def _methods(ctx, where):
    """{method name: ExportedProgramInfo}, from exported or from methods (checked)."""
    if ctx.attr.exported and ctx.attr.has_methods:
        fail(where + "set exported (one method, forward) or methods (several), not both")
    if ctx.attr.exported:
        return {"forward": ctx.attr.exported[ExportedProgramInfo]}
    if not ctx.attr.has_methods:
        fail(where + "set exported = \":<torch_export>\" (or methods = {\"forward\": \":<torch_export>\", ...})")
    if not ctx.attr.method_names:
        fail(where + "methods is empty; give at least one, e.g. methods = {\"forward\": \":model_ep\"}")
    for name in ctx.attr.method_names:
        if not is_identifier(name):
            fail(where + "method name {} is not an identifier; use letters, digits and _, e.g. \"decode\"".format(repr(name)))
    return {
        name: ctx.attr.method_exported[index][ExportedProgramInfo]
        for name, index in zip(ctx.attr.method_names, ctx.attr.method_index)
    }

def _metadata(ctx, where, methods):
    metadata = json.decode(ctx.attr.metadata_json)
    for key, value in metadata.items():
        if not is_identifier(key):
            fail(where + "metadata key {} is not an identifier; an app reads it as a method of that name".format(repr(key)))
        if key in methods or key == INPUT_SCHEMA:
            fail(where + "metadata key {} has the name of a method of the program; rename the key".format(repr(key)))
        if type(value) == "list" and value and not [v for v in value if type(v) != "int"]:
            continue  # a list of ints, e.g. an LLM's get_eos_ids: the method returns each
        if type(value) not in ("int", "string", "bool", "float"):
            kind = type(value)
            if kind == "list":
                kind = "list of " + ", ".join(sorted({type(v): None for v in value}.keys())) if value else "empty list"
            fail(where + "metadata[{}] is a {}; give an int, float, bool, string or a non-empty list of ints (encode structures as a JSON string)".format(repr(key), kind))
    return metadata

def _kernels_config(ctx, where, rule_kernel_lists):
    """The "kernels" list of the lowering's config (exporter/core/kernels.py), and its files.

    Built-in libraries come with the toolchain's files for them, then the kernel list YAMLs
    that the target names.

    Args:
      ctx: the rule context.
      where: the message prefix naming the target.
      rule_kernel_lists: kernel list targets the rule adds after the target's own.

    Returns:
      (a list of {"name", "files"[, "custom"]} dicts, the list of the Files they name).
    """
    if not ctx.attr.kernels and not ctx.attr.kernel_lists:
        fail(where + "kernels is empty; name the kernel library the app links, e.g. kernels = \"portable\"")
    release = ctx.attr.release[ExecuTorchReleaseInfo] if ctx.attr.release else None
    lists = release.kernel_lists if release else ctx.toolchains[TORCH_EXPORT_TOOLCHAIN_TYPE].kernel_lists
    config, inputs = [], []
    for name in ctx.attr.kernels:
        if name not in KERNEL_LIBRARIES:
            fail(where + "kernels has {}; use one of {} or the label of a kernel list YAML in ExecuTorch's functions.yaml format, e.g. \":my_ops\"".format(repr(name), KERNEL_LIBRARIES))
        files = lists.get(name)
        if files == [] and name != "optimized":  # the optimized library falls back to its runtime's list
            fail(where + "the toolchain's ExecuTorch ships no kernel list for kernels = {}; use \"portable\" or a kernel list YAML target".format(repr(name)))
        config.append({"name": name, "files": [f.path for f in files] if files != None else None})
        inputs += files or []
    for target in ctx.attr.kernel_lists + rule_kernel_lists:
        files = target.files.to_list()
        config.append({"name": str(target.label), "files": [f.path for f in files], "custom": True})
        inputs += files
    return config, inputs

def _method_backends(ctx, where, methods):
    """(the program's backend names, {method name: its backend names}, {backend: options}), checked.

    The per-method dict when the BUILD file gave one (it must name exactly the program's
    methods), else the one list for every method. Each value is a backend's name or a backend
    with options (backends.bzl).
    """
    options = {}
    if not ctx.attr.per_method_backends:
        backends = parse_backends(where, ctx.attr.backends, options)
        return backends, {name: backends for name in methods}, options
    given = ctx.attr.method_backends
    if sorted(given.keys()) != sorted(methods.keys()):
        fail(where + "backends names methods {} but the program has {}; give one list per method, e.g. {}".format(
            sorted(given.keys()),
            sorted(methods.keys()),
            {name: given.get(name, []) for name in sorted(methods.keys())},
        ))
    method_backends = {name: parse_backends(where, given[name], options) for name in methods}
    backends = sorted({b: None for listed in method_backends.values() for b in listed}.keys())
    return backends, method_backends, options

def _binds(quantizer):
    """Whether a program quantized by `quantizer` lowers only for the backend of that name."""
    own = BACKEND_RECORDS[quantizer]["quantizer"] if quantizer in BACKEND_RECORDS else None
    return bool(own and own["binds"])

def _check_quantizers(where, methods, method_backends):
    """Fails when a method quantized by a backend's own quantizer is lowered for another backend.

    Measured, the lowering then fails deep inside ExecuTorch (docs/backends.md). Some quantizers
    (XNNPACK's) and torchao's eager quantization (torch_export's quantize) give programs that any
    backend lowers; the others bind a method to their backend (their record's quantizer "binds").
    """
    for name, exported in methods.items():
        quantizer = (exported.quantization or {}).get("quantizer")
        if quantizer and _binds(quantizer) and method_backends[name] != [quantizer]:
            fail(where + "method {} comes from {}, quantized with quantizer = {}, which only the {} backend lowers, but its backends are {}; set backends = [{}()] (or quantize with quantizer = \"xnnpack\")".format(
                name,
                exported.label,
                repr(quantizer),
                quantizer,
                method_backends[name],
                quantizer,
            ))

def _check_integer_only(where, methods, method_backends, options):
    """Fails when a float method is lowered for a backend that runs integer operators only.

    Measured, such a backend's partitioner would leave every float operator on the CPU without a
    word (the lowering checks it again, exporter/actions/lower.py).
    """
    for name, exported in methods.items():
        for backend in method_backends[name]:
            if not exported.quantization and integer_only(backend, options.get(backend, {})):
                quantizer = backend if BACKEND_RECORDS[backend]["quantizer"] else "xnnpack"
                fail(where + "method {} comes from {}, which is not quantized, and {} runs integer operators only; quantize it with torch_quantize(quantizer = \"{}\") and lower that".format(name, exported.label, integer_only_text(backend, options.get(backend, {})), quantizer))

def _backends_text(ctx, method_backends):
    """For the progress message: "xnnpack", "portable" or "forward: xnnpack; batched: portable"."""
    if not ctx.attr.per_method_backends:
        return ", ".join(method_backends.values()[0] if method_backends else []) or "portable"
    return "; ".join(["{}: {}".format(m, ", ".join(b) or "portable") for m, b in method_backends.items()])

def _foundation(ctx, where, backends):
    """The FoundationWeightsInfo the program shares weights with, checked; None without one."""
    if not ctx.attr.foundation:
        return None
    foundation = ctx.attr.foundation[FoundationWeightsInfo]
    if ctx.attr.weights == "external":
        fail(where + "weights = \"external\" and foundation are exclusive: with a foundation, the program's own tensors stay in its .pte and the rest are in {}'s .ptd; remove weights".format(foundation.label))
    if newer_than(foundation.program.release, ctx.attr.release_name):
        fail(where + "foundation {} holds the weights of {}, lowered for ExecuTorch {}, newer than this program's release {}; lower that program with release = \"{}\" too".format(foundation.label, foundation.program.label, foundation.program.release, ctx.attr.release_name, ctx.attr.release_name))
    theirs = sorted(foundation.program.backends)
    if sorted(backends) != theirs:
        fail(where + "backends {} differ from {} of {}, whose .ptd foundation {} shares: XNNPACK keys its weights by their bytes and the portable runtime by name, so a .ptd serves programs of its own backends; set backends = {}".format(
            sorted(backends),
            theirs,
            foundation.program.label,
            foundation.label,
            theirs,
        ))
    return foundation

def _check(ctx, where, semantics):
    """Every check of a program's attributes, before anything is declared.

    Returns:
      struct(methods, backends, method_backends, backend_options, metadata, initialized_buffers,
      kernels, kernel_inputs, foundation).
    """
    check_release(where, ctx.attr.release_name)
    methods = _methods(ctx, where)
    backends, method_backends, backend_options = _method_backends(ctx, where, methods)
    _check_quantizers(where, methods, method_backends)
    _check_integer_only(where, methods, method_backends, backend_options)
    for name, exported in methods.items():
        check_static_shapes(where, name, method_backends[name], exported.spec.label, exported.spec.spec["dims"])
    metadata = _metadata(ctx, where, methods)
    check_one_of(where, "weights", ctx.attr.weights, WEIGHTS, fix = "use \"external\" for a separate .ptd file")
    check_backend_weights(where, ctx.attr.weights, backends)
    initialized_buffers = json.decode(ctx.attr.initialized_buffers_json)
    if initialized_buffers == None:
        initialized_buffers = semantics.initialized_buffers
    if initialized_buffers != None:
        if type(initialized_buffers) != "list" or [b for b in initialized_buffers if type(b) != "string" or not b]:
            fail(where + "initialized_buffers must be a list of buffer names, e.g. [\"k_cache\"] ([] for none)")
    kernels, kernel_inputs = _kernels_config(ctx, where, semantics.kernel_lists)
    return struct(
        methods = methods,
        backends = backends,
        method_backends = method_backends,
        backend_options = backend_options,
        metadata = metadata,
        initialized_buffers = initialized_buffers,
        kernels = kernels,
        kernel_inputs = kernel_inputs,
        foundation = _foundation(ctx, where, backends),
    )

def _declare_outputs(ctx, checked):
    """{role: File} of the lowering: pte, manifest, selected_ops, and ptd and summary on request.

    A backend may write files of its own beside them (its record's outputs, each its own output
    group; docs/backends.md lists them).
    """
    outputs = {
        "pte": ctx.actions.declare_file(ctx.label.name + ".pte"),
        "manifest": ctx.actions.declare_file(ctx.label.name + ".pte.json"),
    }
    if ctx.attr.weights == "external":
        outputs["ptd"] = ctx.actions.declare_file(ctx.label.name + ".ptd")
    if ctx.attr.summary:
        # What pte_inspect --json prints, so tests and CI can diff it.
        outputs["summary"] = ctx.actions.declare_file(ctx.label.name + ".summary.json")
    outputs["selected_ops"] = ctx.actions.declare_file(ctx.label.name + ".selected_operators.yaml")
    for name in checked.backends:
        for role, suffix in BACKEND_RECORDS[name]["outputs"].items():
            outputs[role] = ctx.actions.declare_file(ctx.label.name + suffix)

    # What the report draws, read while the lowering has the program in memory.
    outputs["graph"] = ctx.actions.declare_file(ctx.label.name + ".program_graph.json")
    return outputs

def _config(ctx, checked, semantics):
    """The lowering's config (exporter/actions/registry.py's LowerConfig).

    Optional keys appear only when they differ from the defaults, so that every program's
    config keeps its bytes.
    """
    if ctx.attr.exported:
        config = _method_config(checked.methods["forward"])
    else:
        config = {"methods": {name: _method_config(m) for name, m in checked.methods.items()}}
    config["backends"] = checked.backends
    if checked.backend_options:  # only then: an XNNPACK program's config keeps its bytes
        config["backend_options"] = checked.backend_options
    if ctx.files.backend_packages:
        config["backend_packages"] = [f.path for f in package_identities(ctx.files.backend_packages)]
    if ctx.attr.per_method_backends:
        config["method_backends"] = checked.method_backends
    if checked.metadata:
        config["metadata"] = checked.metadata
    if ctx.attr.weights == "external":
        config["weights"] = "external"
    if checked.initialized_buffers != None:
        config["initialized_buffers"] = checked.initialized_buffers
    config["kernels"] = checked.kernels
    if semantics.llm:
        config["llm"] = semantics.llm
    if semantics.multimodal:
        config["multimodal"] = semantics.multimodal
    if checked.foundation:
        config["foundation"] = {"label": str(checked.foundation.label), "index": checked.foundation.index.path}
    if ctx.attr.release_name != DEFAULT_RELEASE:  # only then: the default programs' configs keep their bytes
        config["release"] = ctx.attr.release_name
    return config

def _providers(ctx, checked, outputs, logs, etrecord, report, semantics):
    methods = checked.methods
    foundation = checked.foundation
    ptd = foundation.ptd if foundation else outputs.get("ptd")  # the file the app loads with the .pte
    files = [f for role, f in outputs.items() if role not in ["selected_ops", "graph"] + _BACKEND_OUTPUTS] + ([ptd] if foundation else [])
    groups = {role: depset([outputs[role]] if role in outputs else []) for role in _BACKEND_OUTPUTS}
    return [
        executorch_program_info(
            label = ctx.label,
            pte = outputs["pte"],
            manifest = outputs["manifest"],
            backends = checked.backends,
            method_backends = checked.method_backends,
            backend_options = checked.backend_options,
            backend_packages = ctx.files.backend_packages,
            exported = methods["forward"] if "forward" in methods else methods.values()[0],
            methods = methods,
            ptd = ptd,
            selected_ops = outputs["selected_ops"],
            etrecord = etrecord,
            tokenizer = semantics.tokenizer,
            foundation = foundation,
            release = ctx.attr.release_name,
        ),
        DefaultInfo(files = depset(files), runfiles = ctx.runfiles(files = files + [outputs["selected_ops"]])),
        OutputGroupInfo(
            logs = depset(logs),
            report = depset(report),
            program_graph = depset([outputs["graph"]]),
            pte_summary = depset([outputs["summary"]] if "summary" in outputs else []),
            selected_ops = depset([outputs["selected_ops"]]),
            etrecord = depset([etrecord]),
            **groups
        ),
    ]

def lowering_semantics(kind, llm = None, inputs = [], tokenizer = None, multimodal = None, kernel_lists = [], initialized_buffers = None):
    """What a rule adds to the shared lowering.

    Args:
      kind: the rule's name, which starts its failure messages.
      llm: for llm_program, the config's "llm" entry (exporter/actions/llm.py); else None.
      inputs: Files the lowering reads besides the .pt2 files and kernel lists.
      tokenizer: the TokenizerInfo the program records, or None.
      multimodal: for multimodal_program, the config's "multimodal" entry
        (exporter/actions/multimodal.py); else None.
      kernel_lists: kernel list targets the rule adds after the target's own (llm_program's
        LLM operators, when its default turns them on).
      initialized_buffers: the rule's initialized_buffers when the target gives none; None for all.

    Returns:
      The semantics lower_program takes.
    """
    return struct(kind = kind, llm = llm, inputs = inputs, tokenizer = tokenizer, multimodal = multimodal, kernel_lists = kernel_lists, initialized_buffers = initialized_buffers)

def lower_program(ctx, semantics):
    """The implementation of a rule with PROGRAM_ATTRS: checks, then the lowering's actions.

    Args:
      ctx: the rule context.
      semantics: from lowering_semantics.

    Returns:
      The rule's providers: ExecuTorchProgramInfo, DefaultInfo and OutputGroupInfo.
    """
    checked = _check(ctx, message_prefix(semantics.kind, ctx.label), semantics)
    outputs = _declare_outputs(ctx, checked)
    config = _config(ctx, checked, semantics)
    pt2s = [m.pt2 for m in checked.methods.values()]
    index = [checked.foundation.index] if checked.foundation else []
    release = ctx.attr.release[ExecuTorchReleaseInfo] if ctx.attr.release else None
    log = run_exporter(
        ctx,
        command = "lower",
        progress_message = "Lowering {} to ExecuTorch{} ({})".format(ctx.label, " " + release.name if release else "", _backends_text(ctx, checked.method_backends)),
        config = config,
        inputs = pt2s + index + checked.kernel_inputs + semantics.inputs + ctx.files.backend_packages,
        outputs = outputs,
        per_machine = per_machine(checked.backends),
        release = release,
    )

    # A separate action, so that only builds that ask for it lower again (exporter/actions/etrecord.py).
    etrecord = ctx.actions.declare_file(ctx.label.name + ".etrecord")
    run_exporter(
        ctx,
        command = "etrecord",
        progress_message = "Writing the ETRecord of {}".format(ctx.label),
        # Without kernels: it lowers again and reads no kernel list (exporter/actions/etrecord.py).
        config = dict({k: v for k, v in config.items() if k != "kernels"}, pte = outputs["pte"].path),
        inputs = pt2s + index + [outputs["pte"]] + semantics.inputs + ctx.files.backend_packages,
        outputs = {"etrecord": etrecord},
        per_machine = per_machine(checked.backends),
        release = release,
    )
    kernels = ctx.attr.kernels + [str(target.label) for target in ctx.attr.kernel_lists]

    # A program on a foundation loads the foundation's .ptd: its report shows that one.
    ptd = {"ptd": checked.foundation.ptd} if checked.foundation else {}
    report = program_report(ctx, dict(outputs, **ptd), checked.methods, kernels)
    return _providers(ctx, checked, outputs, [log], etrecord, report, semantics)

# The attributes of every rule that lowers with lower_program, set by its macro (program_attrs).
PROGRAM_ATTRS = dict({
    "exported": attr.label(
        providers = [ExportedProgramInfo],
        doc = "The torch_export (or torch_quantize) whose .pt2 to lower, as the method forward.",
    ),
    "has_methods": attr.bool(doc = "Whether the macro was given methods (set by the macro)."),
    "method_names": attr.string_list(doc = "The methods' names (set by the macro)."),
    "method_exported": attr.label_list(
        providers = [ExportedProgramInfo],
        doc = "The methods' programs, each once (set by the macro).",
    ),
    "method_index": attr.int_list(doc = "For each of method_names, its index in method_exported (set by the macro)."),
    "metadata_json": attr.string(default = "{}", doc = "metadata as JSON (set by the macro)."),
    "initialized_buffers_json": attr.string(
        default = "null",
        doc = "initialized_buffers as JSON, null for every mutated buffer (set by the macro).",
    ),
    "backends": attr.string_list(
        default = LOWER_DEFAULTS["backends"],
        doc = "Delegates to partition for: ['xnnpack'], or [] for the portable runtime only " +
              "(with per-method backends, every backend any method names; set by the macro).",
    ),
    "per_method_backends": attr.bool(doc = "Whether the macro was given a dict of backends (set by the macro)."),
    "backend_packages": attr.label_list(
        allow_files = True,
        doc = "The package repositories of the backends with a lock of their own (set by the " +
              "macro from backends: only targets that name such a backend fetch one).",
    ),
    "method_backends": attr.string_list_dict(doc = "The backends of each method (set by the macro)."),
    "weights": attr.string(
        default = LOWER_DEFAULTS["weights"],
        doc = "\"inline\": the weights are in the .pte; \"external\": in <name>.ptd, " +
              "ExecuTorch's named data file, so that program and weights ship apart (the app " +
              "loads both; see docs/programs.md).",
    ),
    "kernels": attr.string_list(
        default = DEFAULT_KERNELS,
        doc = "The built-in kernel libraries the app links (set by the macro from `kernels`): " +
              "\"portable\", \"optimized\", \"quantized\".",
    ),
    "kernel_lists": attr.label_list(
        allow_files = [".yaml"],
        doc = "Kernel list YAMLs of the app's own kernels (set by the macro from `kernels`).",
    ),
    "foundation": attr.label(
        providers = [FoundationWeightsInfo],
        doc = "A foundation_weights whose .ptd holds the program's shared weights: every tensor " +
              "the foundation holds is referenced there by name, and the .pte keeps only the " +
              "program's own (a lora_model's factors). The build checks each against the " +
              "foundation's index (docs/llm.md, \"LoRA adapters: one set of weights\").",
    ),
    "summary": attr.bool(
        default = False,
        doc = "Also write <name>.summary.json: the .pte's methods, operators, delegates and " +
              "sizes, as `pte_inspect --json` prints them (output group pte_summary).",
    ),
    "release_name": attr.string(
        default = DEFAULT_RELEASE,
        doc = "The ExecuTorch release the program is lowered for and runs in (set by the macro from release).",
    ),
    "release": attr.label(
        providers = [ExecuTorchReleaseInfo],
        doc = "The release's target, //toolchain/releases:<release>, for a release other than the " +
              "toolchain's own (set by the macro from release: only targets that name one fetch it).",
    ),
}, **dict(DEADLINE_ATTRS, **dict(warm_up_attrs("lower"), **GRAPHVIZ_ATTRS)))

def split_kernels(kernels):
    """Splits executorch_program's `kernels` into built-in library names and YAML labels.

    Args:
      kernels: a string or a list of strings: library names and labels.

    Returns:
      (built-in library names, kernel list labels).
    """
    names, labels = [], []
    for item in [kernels] if type(kernels) == "string" else kernels:
        if item not in KERNEL_LIBRARIES and (":" in item or "/" in item or item.endswith(".yaml")):
            labels.append(item)
        else:
            names.append(item)  # the rule checks the name, and says what to write instead
    return names, labels

def program_attrs(exported = None, methods = None, metadata = {}, kernels = DEFAULT_KERNELS, initialized_buffers = None, backends = LOWER_DEFAULTS["backends"], release = None, **kwargs):
    """The PROGRAM_ATTRS of a program macro's arguments (executorch_program documents them).

    Args:
      exported: the torch_export to lower as the method forward.
      methods: {method name: torch_export label}, instead of exported.
      metadata: {name: constant}: constant methods.
      kernels: a kernel library name, a kernel list label, or a list of these.
      initialized_buffers: the mutated buffers whose initial value the .pte keeps; None for all.
      backends: a list of backends, or {method name: list of backends}.
      release: the ExecuTorch release, e.g. "1.4"; None for the toolchain's own.
      **kwargs: the rule's other attributes (weights, summary, tags, visibility, ...).

    Returns:
      A dict of keyword arguments for the rule.
    """
    kernel_names, kernel_lists = split_kernels(kernels)
    per_method = type(backends) == "dict"
    method_backends = backends if per_method else {}
    if per_method:
        backends = sorted({b: None for listed in backends.values() for b in listed}.keys())
    programs = []  # a label_list takes each label once; two methods may lower one program
    for label in (methods or {}).values():
        if label not in programs:
            programs.append(label)
    return dict(
        kwargs,
        exported = exported,
        has_methods = methods != None,
        method_names = list(methods.keys()) if methods else [],
        method_exported = programs,
        method_index = [programs.index(label) for label in (methods or {}).values()],
        metadata_json = json.encode(metadata),
        initialized_buffers_json = json.encode(initialized_buffers),
        kernels = kernel_names,
        kernel_lists = kernel_lists,
        backends = backends,
        per_method_backends = per_method,
        method_backends = method_backends,
        backend_packages = backend_packages_labels(backends),
        release_name = release or DEFAULT_RELEASE,
        release = release_label(release),
    )
