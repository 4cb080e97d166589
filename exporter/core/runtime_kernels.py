"""Kernels the wheel ships that ExecuTorch's Python runtime does not register by itself."""

# How a program's operator table names ExecuTorch's LLM operators (llm_program's llm_ops).
_LLM_OPS_NAMESPACE = "llama::"


def register(operators=()):
    """Registers the quantized_decomposed kernels (libexecutorch_kernels_quantized.so, which the
    native runner links too): a program with quantized embeddings (torch_export's
    embedding_quantize) calls them outside its delegates. The Python runtime and ExecuTorch's
    LLM runner share one registry (libexecutorch.so), so this serves both.

    When `operators` (the program's operator table, pte_inspect.operator_names) names one of
    ExecuTorch's LLM operators (llm_ops), also loads their kernels, libcustom_ops_aot_lib.so
    (0.1 s; only then)."""
    import executorch.kernels.quantized  # noqa: F401

    if calls_llm_ops(operators):
        import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401


def calls_llm_ops(operators):
    """Whether the operator names include one of ExecuTorch's LLM operators."""
    return any(name.startswith(_LLM_OPS_NAMESPACE) for name in operators)
