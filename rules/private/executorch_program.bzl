"""executorch_program: lowers a torch_export's .pt2 to an ExecuTorch .pte. Never re-exports."""

load("//exporter:exporter_facts.bzl", "BACKENDS", "CONFIG_DEFAULTS", "KERNEL_LIBRARIES", "WEIGHTS")
load("//rules:providers.bzl", "ExecuTorchProgramInfo", "ExportedProgramInfo", "TokenizerInfo", "executorch_program_info")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")
load(":checks.bzl", "check_one_of", "message_prefix")
load(":config_entries.bzl", "exported_config")
load(":exporter_action.bzl", "run_exporter", "warm_up_attrs")
load(":linear_expr.bzl", "is_identifier")

# The lowering's defaults (exporter/actions/registry.py's LowerConfig).
_DEFAULTS = CONFIG_DEFAULTS["lower"]
_DEFAULT_KERNELS = [library["name"] for library in _DEFAULTS["kernels"]]

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

def _kernels_config(ctx, where):
    """The "kernels" list of the lowering's config (exporter/core/kernels.py), and its files.

    Built-in libraries come with the toolchain's files for them, then the kernel list YAMLs
    that the target names.

    Args:
      ctx: the rule context.
      where: the message prefix naming the target.

    Returns:
      (a list of {"name", "files"[, "custom"]} dicts, the list of the Files they name).
    """
    if not ctx.attr.kernels and not ctx.attr.kernel_lists:
        fail(where + "kernels is empty; name the kernel library the app links, e.g. kernels = \"portable\"")
    lists = ctx.toolchains[TORCH_EXPORT_TOOLCHAIN_TYPE].kernel_lists
    config, inputs = [], []
    for name in ctx.attr.kernels:
        if name not in KERNEL_LIBRARIES:
            fail(where + "kernels has {}; use one of {} or the label of a kernel list YAML in ExecuTorch's functions.yaml format, e.g. \":my_ops\"".format(repr(name), KERNEL_LIBRARIES))
        files = lists.get(name)
        if files == [] and name != "optimized":  # the optimized library falls back to its runtime's list
            fail(where + "the toolchain's ExecuTorch ships no kernel list for kernels = {}; use \"portable\" or a kernel list YAML target".format(repr(name)))
        config.append({"name": name, "files": [f.path for f in files] if files != None else None})
        inputs += files or []
    for target in ctx.attr.kernel_lists:
        files = target.files.to_list()
        config.append({"name": str(target.label), "files": [f.path for f in files], "custom": True})
        inputs += files
    return config, inputs

def _check_backends(where, backends):
    for backend in backends:
        if backend not in BACKENDS:
            fail(where + "backends has {}; use {} (or [] for the portable runtime)".format(repr(backend), BACKENDS))

def _method_backends(ctx, where, methods):
    """{method name: its backends}, checked.

    The per-method dict when the BUILD file gave one (it must name exactly the program's
    methods), else the one list for every method.
    """
    if not ctx.attr.per_method_backends:
        _check_backends(where, ctx.attr.backends)
        return {name: ctx.attr.backends for name in methods}
    given = ctx.attr.method_backends
    if sorted(given.keys()) != sorted(methods.keys()):
        fail(where + "backends names methods {} but the program has {}; give one list per method, e.g. {}".format(
            sorted(given.keys()),
            sorted(methods.keys()),
            {name: given.get(name, []) for name in sorted(methods.keys())},
        ))
    for backends in given.values():
        _check_backends(where, backends)
    return {name: given[name] for name in methods}

def _backends_text(ctx, method_backends):
    """For the progress message: "xnnpack", "portable" or "forward: xnnpack; batched: portable"."""
    if not ctx.attr.per_method_backends:
        return ", ".join(ctx.attr.backends) or "portable"
    return "; ".join(["{}: {}".format(m, ", ".join(b) or "portable") for m, b in method_backends.items()])

def _executorch_program_impl(ctx):
    where = message_prefix("executorch_program", ctx.label)
    methods = _methods(ctx, where)
    method_backends = _method_backends(ctx, where, methods)
    metadata = _metadata(ctx, where, methods)
    exported = methods["forward"] if "forward" in methods else methods.values()[0]
    pte = ctx.actions.declare_file(ctx.label.name + ".pte")
    manifest = ctx.actions.declare_file(ctx.label.name + ".pte.json")
    outputs = {"pte": pte, "manifest": manifest}
    check_one_of(where, "weights", ctx.attr.weights, WEIGHTS, fix = "use \"external\" for a separate .ptd file")
    ptd = None
    if ctx.attr.weights == "external":
        ptd = ctx.actions.declare_file(ctx.label.name + ".ptd")
        outputs["ptd"] = ptd
    if ctx.attr.summary:
        # What pte_inspect --json prints, so tests and CI can diff it.
        outputs["summary"] = ctx.actions.declare_file(ctx.label.name + ".summary.json")
    if ctx.attr.exported:
        config = _method_config(exported)
    else:
        config = {"methods": {name: _method_config(m) for name, m in methods.items()}}
    config["backends"] = ctx.attr.backends
    if ctx.attr.per_method_backends:
        config["method_backends"] = method_backends
    if metadata:
        config["metadata"] = metadata
    if ptd:
        config["weights"] = "external"
    initialized_buffers = json.decode(ctx.attr.initialized_buffers_json)
    if initialized_buffers != None:
        if type(initialized_buffers) != "list" or [b for b in initialized_buffers if type(b) != "string" or not b]:
            fail(where + "initialized_buffers must be a list of buffer names, e.g. [\"k_cache\"] ([] for none)")
        config["initialized_buffers"] = initialized_buffers
    kernels, kernel_inputs = _kernels_config(ctx, where)
    config["kernels"] = kernels
    llm_inputs = []
    if ctx.attr.llm_json:  # an llm_program: the lowering writes the runner's constant methods
        tokenizer = ctx.attr.tokenizer[TokenizerInfo]
        config["llm"] = dict(
            json.decode(ctx.attr.llm_json),
            tokenizer = {"label": str(tokenizer.label), "manifest": tokenizer.manifest.path},
        )
        llm_inputs = [tokenizer.manifest]
    outputs["selected_ops"] = ctx.actions.declare_file(ctx.label.name + ".selected_operators.yaml")
    log = run_exporter(
        ctx,
        command = "lower",
        progress_message = "Lowering {} to ExecuTorch ({})".format(ctx.label, _backends_text(ctx, method_backends)),
        config = config,
        inputs = [m.pt2 for m in methods.values()] + kernel_inputs + llm_inputs,
        outputs = outputs,
    )

    # A separate action, so that only builds that ask for it lower again (exporter/actions/etrecord.py).
    etrecord = ctx.actions.declare_file(ctx.label.name + ".etrecord")
    run_exporter(
        ctx,
        command = "etrecord",
        progress_message = "Writing the ETRecord of {}".format(ctx.label),
        # Without kernels: it lowers again and reads no kernel list (exporter/actions/etrecord.py).
        config = dict({k: v for k, v in config.items() if k != "kernels"}, pte = pte.path),
        inputs = [m.pt2 for m in methods.values()] + [pte] + llm_inputs,
        outputs = {"etrecord": etrecord},
    )
    files = [f for role, f in outputs.items() if role != "selected_ops"]
    return [
        executorch_program_info(
            label = ctx.label,
            pte = pte,
            manifest = manifest,
            backends = ctx.attr.backends,
            method_backends = method_backends,
            exported = exported,
            methods = methods,
            ptd = ptd,
            selected_ops = outputs["selected_ops"],
            etrecord = etrecord,
            tokenizer = ctx.attr.tokenizer[TokenizerInfo] if ctx.attr.tokenizer else None,
        ),
        DefaultInfo(files = depset(files), runfiles = ctx.runfiles(files = files + [outputs["selected_ops"]])),
        OutputGroupInfo(
            logs = depset([log]),
            pte_summary = depset([outputs["summary"]] if ctx.attr.summary else []),
            selected_ops = depset([outputs["selected_ops"]]),
            etrecord = depset([etrecord]),
        ),
    ]

executorch_program_rule = rule(
    implementation = _executorch_program_impl,
    doc = "Lowers exported programs to ExecuTorch. Outputs <name>.pte and <name>.pte.json.",
    attrs = dict({
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
            default = _DEFAULTS["backends"],
            doc = "Delegates to partition for: ['xnnpack'], or [] for the portable runtime only " +
                  "(with per-method backends, every backend any method names; set by the macro).",
        ),
        "per_method_backends": attr.bool(doc = "Whether the macro was given a dict of backends (set by the macro)."),
        "method_backends": attr.string_list_dict(doc = "The backends of each method (set by the macro)."),
        "weights": attr.string(
            default = _DEFAULTS["weights"],
            doc = "\"inline\": the weights are in the .pte; \"external\": in <name>.ptd, " +
                  "ExecuTorch's named data file, so that program and weights ship apart (the app " +
                  "loads both; see docs/programs.md).",
        ),
        "kernels": attr.string_list(
            default = _DEFAULT_KERNELS,
            doc = "The built-in kernel libraries the app links (set by the macro from `kernels`): " +
                  "\"portable\", \"optimized\", \"quantized\".",
        ),
        "kernel_lists": attr.label_list(
            allow_files = [".yaml"],
            doc = "Kernel list YAMLs of the app's own kernels (set by the macro from `kernels`).",
        ),
        "llm_json": attr.string(doc = "For llm_program: max_seq_len and max_context_len as JSON (set by llm_program)."),
        "tokenizer": attr.label(providers = [TokenizerInfo], doc = "For llm_program: the tokenizer whose ids the program records (set by llm_program)."),
        "summary": attr.bool(
            default = False,
            doc = "Also write <name>.summary.json: the .pte's methods, operators, delegates and " +
                  "sizes, as `pte_inspect --json` prints them (output group pte_summary).",
        ),
    }, **warm_up_attrs("lower")),
    provides = [ExecuTorchProgramInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)

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

def executorch_program(name, exported = None, methods = None, metadata = {}, kernels = _DEFAULT_KERNELS, initialized_buffers = None, backends = _DEFAULTS["backends"], **kwargs):
    """Lowers one exported program, or several as the methods of one .pte, to ExecuTorch.

    Outputs <name>.pte and <name>.pte.json. Every program also holds the constant method
    `input_schema`: a JSON string with each method's input names, dtypes, shapes and dims'
    min and max, which an app can read without running the model (docs/programs.md).

    Args:
      name: the target's name.
      exported: the torch_export (or torch_quantize) to lower as the method `forward`.
      methods: instead of exported, {method name: torch_export label}, e.g. {"forward":
        ":encoder_ep", "decode": ":decoder_ep"}: one .pte whose methods share equal weights.
      metadata: {name: int, float, bool, string or list of ints}, each written as a constant
        method the app reads, e.g. {"model_version": 3, "get_eos_ids": [2]}; a name may not be
        a method's.
      initialized_buffers: for a program that mutates buffers (a KV cache): the buffers whose
        initial value the .pte keeps, by full name ("blocks.0.k_cache") or last part
        ("k_cache"). Default None keeps every mutated buffer's, so the first call sees the
        model's initial state on any runtime; [] keeps none (ExecuTorch's default: the app's
        memory is the initial state). Methods of one program share their buffers
        (docs/stateful.md).
      kernels: the kernel library the app links, which must hold a kernel for every operator
        the program leaves outside its delegates, in every method (the build fails naming the
        missing ones): "portable" (default), "optimized" or "quantized" (the lists the
        installed ExecuTorch ships), the label of a kernel list YAML in ExecuTorch's
        functions.yaml format (":my_ops.yaml"), or a list of these, e.g. ["portable",
        ":my_ops.yaml"] (docs/deployment.md). Every program also writes
        <name>.selected_operators.yaml (output group selected_ops) and, on request,
        <name>.etrecord (output group etrecord).
      backends: the delegates to partition for: ["xnnpack"] (default), or [] for the portable
        runtime only; or, for a program with methods, one list per method, e.g. {"forward":
        ["xnnpack"], "batched": []} (docs/programs.md, "Backends per method").
      **kwargs: weights, summary, and the common attributes (tags, visibility, ...).
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
    executorch_program_rule(
        name = name,
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
        # Only llm_program sets these (rules/private/llm_program.bzl).
        llm_json = kwargs.pop("llm_json", ""),
        tokenizer = kwargs.pop("tokenizer", None),
        **kwargs
    )
