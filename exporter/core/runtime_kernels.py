"""Kernels the wheel ships that ExecuTorch's Python runtime does not register by itself."""

# How a program's operator table names ExecuTorch's LLM operators (llm_program's llm_ops).
_LLM_OPS_NAMESPACE = "llama::"


def register(pte=None):
    """Registers the quantized_decomposed kernels (libexecutorch_kernels_quantized.so, which the
    native runner links too): a program with quantized embeddings (torch_export's
    embedding_quantize) calls them outside its delegates. The Python runtime and ExecuTorch's
    LLM runner share one registry (libexecutorch.so), so this serves both.

    When the program at `pte` calls ExecuTorch's LLM operators (llm_ops), also loads their kernels,
    libcustom_ops_aot_lib.so (0.1 s; only then)."""
    import executorch.kernels.quantized  # noqa: F401

    if pte and calls_llm_ops(pte):
        import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401


def calls_llm_ops(pte):
    """Whether a method of the program calls a llama:: operator, by its operator table (pte_inspect's
    reader; a corrupt program raises BadFile naming it)."""
    from exporter.formats import pte_inspect, program_summary

    buf = pte_inspect.read_file(pte)
    with pte_inspect.refusing_corrupt(pte):
        plans = pte_inspect.read_program(buf).execution_plan
        return any(name.startswith(_LLM_OPS_NAMESPACE) for plan in plans for name in program_summary.op_names(plan))
