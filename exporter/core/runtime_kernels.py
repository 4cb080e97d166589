"""Kernels the wheel ships that ExecuTorch's Python runtime does not register by itself."""


def register():
    """Registers the quantized_decomposed kernels (libexecutorch_kernels_quantized.so, which the
    native runner links too): a program with quantized embeddings (torch_export's
    embedding_quantize) calls them outside its delegates. The Python runtime and ExecuTorch's
    LLM runner share one registry (libexecutorch.so), so this serves both."""
    import executorch.kernels.quantized  # noqa: F401
