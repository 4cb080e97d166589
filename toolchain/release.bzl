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
        name = ctx.label.name,
        identity = ctx.file.identity,
        packages = ctx.files.packages,
        kernel_lists = {library: target.files.to_list() for target, library in ctx.attr.kernel_lists.items()},
    )]

executorch_release_rule = rule(
    implementation = _executorch_release_impl,
    doc = "An ExecuTorch release: its packages ahead of the toolchain's venv, its identity and kernel lists.",
    attrs = {
        "identity": attr.label(allow_single_file = True, mandatory = True, doc = "The release repository's identity.txt."),
        "packages": attr.label(mandatory = True, doc = "The release repository's :packages."),
        "kernel_lists": attr.label_keyed_string_dict(allow_files = True, doc = "{files: kernel library name} of the release's kernel lists."),
    },
)

def executorch_release(name, repository):
    """Declares the release `name` from its repository (torch_export_executorch_<lock>).

    Args:
      name: the release, e.g. "1.4": what a program's `release` names.
      repository: its repository, e.g. "@torch_export_executorch_1_4".
    """
    executorch_release_rule(
        name = name,
        identity = repository + "//:identity.txt",
        packages = repository + "//:packages",
        kernel_lists = {"{}//:{}_kernels".format(repository, library): library for library in KERNEL_LIBRARIES},
        visibility = ["//visibility:public"],
    )
