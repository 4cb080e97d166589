"""The ExecuTorch releases as BUILD files name them: `release = "1.4"` (exporter/core/releases.py).

A program states the release whose runtime will load it; its tests run it in a release's runtimes.
The default is the toolchain's own release; any other is a target of //toolchain/releases, which
only the targets naming it depend on (docs/compatibility.md).
"""

load("//exporter:exporter_facts.bzl", "DEFAULT_RELEASE", "RELEASES")
load("//rules:providers.bzl", "ExecuTorchReleaseInfo")

# The native runner of the default release (numerics_test, executorch_benchmark and the rest).
DEFAULT_NATIVE_RUNNER = Label("//native:et_runner")

# Oldest first, as the records are.
RELEASE_NAMES = RELEASES.keys()

def release_label(name):
    """The label of a release's target, or None.

    None for the default release, or for an unknown name, which the rule's check_release reports.
    """
    if not name or name == DEFAULT_RELEASE or name not in RELEASES:
        return None
    return Label("//toolchain/releases:" + name)

def runtimes_label(name):
    """The target of a release's runtimes, which a test that runs them depends on.

    Args:
      name: the release, e.g. "1.3".

    Returns:
      release_label(name), or //toolchain/releases:<release>_runtimes when the release's runtimes
      run in a venv of their own (toolchain/release.bzl); None for the default release.
    """
    label = release_label(name)
    if not label or not RELEASES[name]["runtime_lock"]:
        return label
    return Label("//toolchain/releases:{}_runtimes".format(name))

def check_release(where, name):
    """Fails, naming the target, unless `name` is a release of the records."""
    if name not in RELEASES:
        fail(where + "release = {} is not an ExecuTorch release these rules know; use one of {} (the default is {}; docs/compatibility.md)".format(repr(name), RELEASE_NAMES, repr(DEFAULT_RELEASE)))

def newer_than(release, other):
    """Whether `release` is a newer release than `other` (both checked names)."""
    return RELEASE_NAMES.index(release) > RELEASE_NAMES.index(other)

def release_text(name):
    """"ExecuTorch 1.4 (1.4.1)", for messages."""
    return "ExecuTorch {} ({})".format(name, RELEASES[name]["version"])

def native_runner_label(name):
    """The native runner of a release other than the default (//native:et_runner_<major>_<minor>), or None."""
    if not release_label(name):
        return None
    return Label("//native:et_runner_" + name.replace(".", "_"))

def check_test_release(where, program, given, any_order = False):
    """Fails unless a test may run `program` in the runtimes of release `given`.

    `given` is "" when the test names none: the default's.

    ExecuTorch promises only that a runtime loads the programs of its own and older releases, so
    an older runtime for a newer program fails here, naming both (the compatibility matrix, with
    any_order, runs it anyway and records what happens). A test that names no release runs its
    program in the default's runtimes only when the program is the default's: otherwise it says
    which release to name.

    Args:
      where: the message prefix naming the test.
      program: the ExecuTorchProgramInfo under test.
      given: the test's release, or "".
      any_order: whether a newer program may run in an older runtime.

    Returns:
      The release whose runtimes the test runs.
    """
    check_release(where, given or DEFAULT_RELEASE)
    runtime = given or DEFAULT_RELEASE
    if newer_than(program.release, runtime) and not any_order:
        fail(where + "program {} is lowered for {}, newer than the runtimes of {} this test runs it in: ExecuTorch promises only that a runtime loads programs of its own release or older ones; lower it with release = \"{}\", or test it with release = \"{}\"".format(program.label, release_text(program.release), release_text(runtime), runtime, program.release))
    if not given and program.release != DEFAULT_RELEASE:
        fail(where + "program {} is lowered for {}; set release = \"{}\" to run it in that release's runtimes (or release = \"{}\" for the default's, which load it too)".format(program.label, release_text(program.release), program.release, DEFAULT_RELEASE))
    return runtime

def check_arm64_release(where, runtime, arm64):
    """Fails when an arm64 run is asked of a release whose native runner has no arm64 build."""
    if arm64 and not RELEASES[runtime]["arm64"]:
        fail(where + "runs on arm64, and {}'s native runner has no arm64 build: {}; remove arm64 (docs/compatibility.md)".format(release_text(runtime), RELEASES[runtime]["why_no_arm64"]))

# The attributes of a test rule that runs a program in a release's runtimes (release_test_attrs sets them).
RELEASE_ATTRS = {
    "release_name": attr.string(doc = "The release whose runtimes run the program, or empty for the default's (set by the macro from release)."),
    "release": attr.label(
        providers = [ExecuTorchReleaseInfo],
        doc = "The target of that release's environment, for a release other than the default (set by the macro).",
    ),
    "any_release_order": attr.bool(doc = "Run a program in an older release's runtimes too (set by compatibility_matrix, which records what happens)."),
}

def release_test_attrs(release, runtimes, native_runner, kwargs):
    """The RELEASE_ATTRS and runners of a test macro that runs a program in `release`'s runtimes.

    Args:
      release: the macro's release (None for the default's).
      runtimes: the test's runtimes (None for its default).
      native_runner: the macro's native_runner (None for the release's).
      kwargs: the macro's **kwargs; any_release_order is taken out of them.

    Returns:
      A dict of the rule's attributes: release_name, release, any_release_order, native_runner and
      arm64_runner (the native runner built for arm64, when runtimes names arm64 and the release has one).
    """
    runner = native_runner or native_runner_label(release)
    name = release or DEFAULT_RELEASE
    arm64 = bool(runtimes) and "arm64" in runtimes and name in RELEASES and RELEASES[name]["arm64"]
    return {
        "release_name": release or "",
        "release": runtimes_label(release),
        "any_release_order": kwargs.pop("any_release_order", False),
        "native_runner": runner,
        "arm64_runner": (runner or DEFAULT_NATIVE_RUNNER) if arm64 else None,
    }

def release_runtime_config(ctx, program, runtime):
    """The config entries of a test whose own process runs the program in `runtime`'s Python runtime.

    llm_generation_test and executorch_benchmark run ExecuTorch in the test's process, not in a
    build action: a release other than the default's puts its packages first on the import path
    there (exporter/core/release_site.py, from "executorch_layer"), and the process checks the
    version it ran.

    Args:
      ctx: the context of a rule with RELEASE_ATTRS.
      program: the ExecuTorchProgramInfo it runs.
      runtime: the release check_test_release returned.

    Returns:
      (dict, list of Files): release, program_release and executorch_layer (the release's
      identity.txt as a runfiles path, or None for the default's), and the release's packages;
      ({}, []) for a test that names no release, whose config keeps its bytes.
    """
    if not ctx.attr.release_name:
        return {}, []
    release = ctx.attr.release[ExecuTorchReleaseInfo] if ctx.attr.release else None
    config = {
        "release": runtime,
        "program_release": program.release,
        "executorch_layer": release.identity.short_path if release else None,
    }
    files = release.packages + [release.identity] if release else []
    return config, files
