"""The native runner of an ExecuTorch release whose wheel ships its runtime only inside its Python
binding (exporter/core/releases.py's native = "python_binding": 1.3 and 1.4).

The same et_runner.cc, built against the release's own headers with ET_RUNNER_PROGRAM_API (those
wheels ship no extension/module, data loaders, .ptd maps or ETDump: program_module.h stands in for
Module), and linked with the binding and the libraries it needs (toolchain/release_repository.bzl).
Built for aarch64 (a release whose record has arm64: 1.3 and 1.4), the runtime is the aarch64
wheel's binding with an aarch64 libtorch and libpython (toolchain/libtorch_aarch64.bzl; 1.3's with
torch 2.12's); a release whose record has not is x86-64 only (docs/compatibility.md).
"""

load("//rules:defs.bzl", "EXECUTORCH_COPTS")

_SOURCES = ["etvals.cc", "program_check.cc", "supervisor.cc", "program_module.cc"]
_HEADERS = ["etvals.h", "program_check.h", "supervisor.h", "program_module.h"]

def release_runner(name, version, repository, arm64, tags = []):
    """Declares the native runner `name` (//native:et_runner_<major>_<minor>) of a release.

    Args:
      name: the runner's name; its libraries are <name>_lib and <name>_main.
      version: its version, for the message of a missing kernel library.
      repository: the repository of its native runtime, e.g. "@torch_export_executorch_1_4".
      arm64: whether it builds for aarch64 too (the release's record's arm64).
      tags: the targets' tags, e.g. the nightly tier's for a runtime whose venv is gigabytes.
    """
    compatible = [] if arm64 else ["@platforms//cpu:x86_64"]
    native.cc_library(
        name = name + "_lib",
        srcs = _SOURCES,
        hdrs = _HEADERS,
        copts = EXECUTORCH_COPTS,
        # The message of a missing kernel library: the release's wheel has none to link.
        local_defines = ["ET_LIBS_PREFIX=\"\\\"the runner of a release whose wheel ships it (ExecuTorch {} has its kernels only inside its Python binding), e.g. @torch_export_venv//executorch:\\\"\"".format(version)],
        deps = [repository + "//executorch:runtime"],
        target_compatible_with = compatible,
        tags = tags,
    )
    native.cc_library(
        name = name + "_main",
        srcs = ["et_runner.cc"],
        copts = EXECUTORCH_COPTS,
        local_defines = ["ET_RUNNER_PROGRAM_API"],
        deps = [":" + name + "_lib"],
        alwayslink = True,
        target_compatible_with = compatible,
        tags = tags,
    )
    native.cc_binary(
        name = name,
        deps = [":" + name + "_main"],
        target_compatible_with = compatible,
        tags = tags,
        visibility = ["//visibility:public"],
    )
