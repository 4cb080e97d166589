"""executorch_release: an ExecuTorch release beside the toolchain's own, as targets depend on it.

executorch_program(release = "1.4") depends on //toolchain/releases:1.4, and its lowering runs with
that release's packages ahead of the toolchain's venv (exporter/core/release_site.py); its tests
run the release's runtimes. Only the targets that name a release depend on its target, so only
their builds fetch its repository (toolchain/release_repository.bzl).
"""

load("//exporter:repository_facts.bzl", "KERNEL_LIBRARIES")
load("//rules:providers.bzl", "executorch_release_info")

def _executorch_release_impl(ctx):
    return [executorch_release_info(
        name = ctx.attr.release,
        identity = ctx.file.identity,
        packages = ctx.files.packages,
        kernel_lists = {library: target.files.to_list() for target, library in ctx.attr.kernel_lists.items()},
        runtime_python = ctx.file.runtime_python,
        runtime_identity = ctx.file.runtime_identity,
    )]

executorch_release_rule = rule(
    implementation = _executorch_release_impl,
    doc = "An ExecuTorch release: its packages ahead of the toolchain's venv, its identity and kernel lists.",
    attrs = {
        "release": attr.string(mandatory = True, doc = "The release, e.g. \"1.4\"."),
        "identity": attr.label(allow_single_file = True, mandatory = True, doc = "The release repository's identity.txt."),
        "packages": attr.label(mandatory = True, doc = "The release repository's :packages."),
        "kernel_lists": attr.label_keyed_string_dict(allow_files = True, doc = "{files: kernel library name} of the release's kernel lists."),
        "runtime_python": attr.label(allow_single_file = True, doc = "The python.sh of its runtimes' own venv (runtime_venv_repository.bzl), or None when they run on the toolchain's torch."),
        "runtime_identity": attr.label(allow_single_file = True, doc = "That venv's identity.txt."),
    },
)

def executorch_release(name, repository, runtime_repository = None):
    """Declares the release `name` from its repository (torch_export_executorch_<lock>).

    A release whose runtimes need another torch than the toolchain's gets a second target,
    `<name>_runtimes`, with the venv of those runtimes: only tests that run them depend on it, so
    lowering a program for the release never fetches that venv.

    Args:
      name: the release, e.g. "1.4": what a program's `release` names.
      repository: its repository, e.g. "@torch_export_executorch_1_4".
      runtime_repository: the venv of its runtimes, when they need another torch than the
        toolchain's, e.g. "@torch_export_executorch_1_3_runtime".
    """
    common = dict(
        release = name,
        identity = repository + "//:identity.txt",
        packages = repository + "//:packages",
        kernel_lists = {"{}//:{}_kernels".format(repository, library): library for library in KERNEL_LIBRARIES},
        visibility = ["//visibility:public"],
    )
    executorch_release_rule(name = name, **common)
    if runtime_repository:
        executorch_release_rule(
            name = name + "_runtimes",
            runtime_python = runtime_repository + "//:python.sh",
            runtime_identity = runtime_repository + "//:identity.txt",
            # Out of `//...`: building it installs that venv (5 GB for 1.3); the tests that run
            # the release's runtimes name it.
            tags = ["manual"],
            **common
        )
