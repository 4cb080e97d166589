"""ExecuTorch's native runtime as its wheels ship it, for the BUILD files that the venv repository
(x86-64, from the venv) and the aarch64 repository (from the pinned aarch64 wheel) generate."""

# The shared libraries under executorch/lib that the generated targets link.
NATIVE_LIBRARIES = [
    "executorch",
    "executorch_threadpool",
    "executorch_kernels_optimized",
    "executorch_kernels_quantized",
    "executorch_backend_xnnpack",
    "executorch_etdump",
]

# The headers and what compiling against them takes: the vendored c10 headers are included as
# <c10/...>; C10_USING_CUSTOM_GENERATED_MACROS stands for a header only a PyTorch build makes;
# the libraries were built with the event tracer (its classes change layout without it) and the
# thread pool, as the wheel's share/cmake/executorch-config.cmake says. Every C++ target that
# includes them also needs copts = ["-std=c++17"] (EXECUTORCH_COPTS in @rules_torch_export//rules:defs.bzl):
# Bazel 4.2.3 compiles with -std=c++0x, and copts do not pass through deps.
_HEADERS = """
cc_library(
    name = "{name}",
    hdrs = glob(["include/executorch/**/*.h"]),
    includes = ["include", "include/executorch/runtime/core/portable_type/c10"],
    defines = ["C10_USING_CUSTOM_GENERATED_MACROS", "ET_EVENT_TRACER_ENABLED", "ET_USE_THREADPOOL"],
)
"""

def native_headers_build(name = "headers"):
    """The cc_library of a wheel's executorch/include, as BUILD text."""
    return _HEADERS.format(name = name)
