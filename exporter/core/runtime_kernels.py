"""Kernels the wheel ships that ExecuTorch's Python runtime does not register by itself."""

import mmap

# How a program's operator table names ExecuTorch's LLM operators (llm_program's llm_ops).
_LLM_OPS_NAMESPACE = b"llama::"


def register(pte=None):
    """Registers the quantized_decomposed kernels (libexecutorch_kernels_quantized.so, which the
    native runner links too): a program with quantized embeddings (torch_export's
    embedding_quantize) calls them outside its delegates. The Python runtime and ExecuTorch's
    LLM runner share one registry (libexecutorch.so), so this serves both.

    When the program at `pte` calls ExecuTorch's LLM operators (llm_ops), also loads their kernels,
    libcustom_ops_aot_lib.so (0.1 s; only then)."""
    import executorch.kernels.quantized  # noqa: F401

    if pte and _calls_llm_ops(pte):
        import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401


def _calls_llm_ops(pte):
    """Whether the program's operator table names a llama:: operator (a false match only loads the
    library)."""
    with open(pte, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return data.find(_LLM_OPS_NAMESPACE) >= 0
