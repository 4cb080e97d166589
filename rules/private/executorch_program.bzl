"""executorch_program: lowers a torch_export's .pt2 to an ExecuTorch .pte. Never re-exports."""

load("//rules:providers.bzl", "ExecuTorchProgramInfo")
load("//rules/private/lib:lowering.bzl", "DEFAULT_KERNELS", "LOWER_DEFAULTS", "PROGRAM_ATTRS", "lower_program", "lowering_semantics", "program_attrs")
load("//rules/private/lib:program_explorer.bzl", "program_explorer_for")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")

def _executorch_program_impl(ctx):
    return lower_program(ctx, lowering_semantics("executorch_program"))

executorch_program_rule = rule(
    implementation = _executorch_program_impl,
    doc = "Lowers exported programs to ExecuTorch. Outputs <name>.pte and <name>.pte.json.",
    attrs = PROGRAM_ATTRS,
    provides = [ExecuTorchProgramInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)

def executorch_program(name, exported = None, methods = None, metadata = {}, kernels = DEFAULT_KERNELS, initialized_buffers = None, backends = LOWER_DEFAULTS["backends"], release = None, **kwargs):
    """Lowers one exported program, or several as the methods of one .pte, to ExecuTorch.

    Outputs <name>.pte and <name>.pte.json. Every program also holds the constant method
    `input_schema`: a JSON string with each method's input names, dtypes, shapes and dims'
    min and max, which an app can read without running the model (docs/programs.md).
    `bazel run :<name>.explore` serves the program in Google's Model Explorer on 127.0.0.1
    (a "manual" target: its viewer is fetched only then; docs/report.md, "Model Explorer").

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
        ["xnnpack"], "batched": []} (docs/programs.md, "Backends per method"). A backend may
        write files of its own beside the .pte, each in an output group (Vela's figures, for
        one; docs/backends.md lists them).
      release: the ExecuTorch release whose runtime the app links, e.g. "1.4": the program is
        lowered by that release (its lock, ahead of the toolchain's venv; fetched only when a
        target names it) from the same .pt2, and its manifest names the release. Default None:
        the toolchain's own, "1.5" (ExecuTorch 1.5.1). A test of it sets the same `release`
        (docs/compatibility.md).
      **kwargs: weights, summary, and the common attributes (tags, visibility, ...).
    """
    executorch_program_rule(name = name, **program_attrs(
        exported = exported,
        methods = methods,
        metadata = metadata,
        kernels = kernels,
        initialized_buffers = initialized_buffers,
        backends = backends,
        release = release,
        **kwargs
    ))
    program_explorer_for(name, kwargs)
