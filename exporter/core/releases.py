"""The ExecuTorch releases a program may be lowered for and run in: one record each.

An app links one ExecuTorch runtime and updates it on its own schedule, so a program states the
release whose runtime will load it (executorch_program's `release`). The default is the
toolchain's own ExecuTorch (its lock, toolchain/requirements.lock); every other release is a lock
of its own, toolchain/releases/<lock>.lock, installed beside the toolchain's venv and ahead of it
on the import path (toolchain/layered_locks.bzl), in a repository fetched only when a target names
the release. The records say what was measured of each release on this project's machines
(docs/compatibility.md); `exporter/facts.py` writes them into exporter_facts.bzl for the rules,
and the compatibility matrix (tests/compatibility) holds `loaded_by` to what it measures. Importing
this module imports no torch.
"""

import dataclasses
from typing import Literal


@dataclasses.dataclass(frozen=True, kw_only=True)
class Release:
    """One ExecuTorch release.

    name       what a BUILD file writes, `release = "1.4"`: the minor release an app links
    version    the wheel its lock pins
    lock       toolchain/releases/<lock>.lock, or None for the toolchain's own release (the default)
    native     how its wheel ships the native runtime: "libraries" (executorch/lib, which the native
               runner links), or "python_binding" (only inside the Python binding _portable_lib,
               which links libtorch and libpython: its share/cmake config names that library; the
               native runner links it and builds on the runtime's own headers, without
               extension/module, the data loaders, .ptd maps or ETDump, which its wheel lacks)
    arm64      whether the native runner builds for arm64 (from the release's aarch64 wheel: its
               libraries, or its Python binding with an aarch64 libtorch and libpython); why_no_arm64
               says why not, for the analysis error
    runtime_lock   toolchain/releases/<runtime_lock>.lock, a whole venv for its runtimes, or None when
               they run on the toolchain's torch: its Python binding was compiled against another
               torch's C++ ABI (toolchain/runtime_venv_repository.bzl; fetched only by the targets
               that run a program in its runtimes)
    loaded_by  the oldest release whose runtimes loaded and ran its programs of every form the
               compatibility matrix holds (measured; docs/compatibility.md)
    lowering   what its lowering differs in, for docs and messages
    """

    name: str
    version: str
    lock: str | None
    native: Literal["libraries", "python_binding"]
    arm64: bool
    why_no_arm64: str = ""
    runtime_lock: str | None = None
    loaded_by: str
    lowering: str = ""



RECORDS = (
    Release(
        name="1.3",
        version="1.3.1",
        lock="executorch_1_3",
        native="python_binding",
        # Its aarch64 wheel's binding, with torch 2.12's aarch64 libtorch
        # (toolchain/releases/executorch_1_3_runtime_aarch64.lock).
        arm64=True,
        # Its runtimes need torch 2.12's C++ ABI; PyPI has torch 2.12 only as a CUDA build (2.7 GB of wheels).
        runtime_lock="executorch_1_3_runtime",
        loaded_by="1.3",
        lowering="pins scikit-learn 1.7.1; finds flatc only through FLATC_EXECUTABLE; its XNNPACK "
                 "partitioner fails on max_pool2d without a stride (fixed in 1.5.1)",
    ),
    Release(
        name="1.4",
        version="1.4.1",
        lock="executorch_1_4",
        native="python_binding",
        # Its aarch64 wheel's binding, with the aarch64 libtorch of toolchain/libtorch_aarch64.lock.
        arm64=True,
        loaded_by="1.3",
        lowering="its XNNPACK partitioner fails on max_pool2d without a stride (fixed in 1.5.1)",
    ),
    Release(
        name="1.5",
        version="1.5.1",
        lock=None,
        native="libraries",
        arm64=True,
        loaded_by="1.3",
    ),
)

BY_NAME = {r.name: r for r in RECORDS}
NAMES = tuple(r.name for r in RECORDS)  # oldest first
DEFAULT = next(r.name for r in RECORDS if r.lock is None)


def order(name):
    """A release's place among NAMES, oldest first: a newer release compares greater."""
    return NAMES.index(name)


def of_version(version):
    """The record of the release an ExecuTorch version belongs to (its minor release), or None:
    "1.4.1" and "1.4.0" are release 1.4."""
    minor = ".".join(version.split("+")[0].split(".")[:2]) if version else ""
    return BY_NAME.get(minor)


def manifest_record(name):
    """What the manifest of a program lowered for a release other than the default says of it:
    its release and the oldest runtime measured to load that release's programs."""
    release = BY_NAME[name]
    return {"name": release.name, "oldest_runtime_measured": release.loaded_by}


def check_ran(program, release, version):
    """Fails in one line when `program`, tested in `release`'s runtimes (a name, or None for a
    test that names none), ran in ExecuTorch `version` of another release: the release's packages
    were not first on the import path (core/release_site.py)."""
    ran = of_version(version)
    if release and version and (not ran or ran.name != release):
        raise ValueError(f"the Python runtime that ran {program} is ExecuTorch {version}, not release {release}'s "
                         f"({BY_NAME[release].version}): the release's packages were not ahead of the toolchain's "
                         f"(exporter/core/release_site.py)")


def crossing_note(program_release, release):
    """", a program of ExecuTorch 1.5 (1.5.1) in the runtimes of 1.4 (1.4.1)" for a test that runs a
    program in another release's runtimes (the compatibility matrix's older ones among them), so
    that a runtime's failure to load it names the program's release; "" otherwise."""
    if not release or not program_release or release == program_release:
        return ""
    program, runtime = BY_NAME[program_release], BY_NAME[release]
    return f", a program of ExecuTorch {program.name} ({program.version}) in the runtimes of {runtime.name} ({runtime.version})"


def of_manifest(manifest):
    """What a program's manifest says of its release: {"name", "version", "toolchain's",
    "oldest_runtime_measured"}. A program of the default release records none (its manifest keeps
    its bytes): it is the toolchain's own, named by the ExecuTorch version its toolchain records.
    A toolchain of a team's own build of no release here has a name and no runtime measured."""
    version = manifest.get("toolchain", {}).get("executorch", "")
    recorded = manifest.get("executorch_release")
    if recorded:
        return {"name": recorded["name"], "version": version, "toolchain's": False,
                "oldest_runtime_measured": recorded["oldest_runtime_measured"]}
    release = of_version(version)
    return {"name": release.name if release else version, "version": version, "toolchain's": True,
            "oldest_runtime_measured": release.loaded_by if release else None}


def describe(found):
    """of_manifest's record in words: "1.5 (the toolchain's, 1.5.1); the oldest runtime measured to
    load it: 1.4"."""
    whose = "the toolchain's, " if found["toolchain's"] else ""
    oldest = found["oldest_runtime_measured"] or "none measured (a build of no release in exporter/core/releases.py)"
    return f"{found['name']} ({whose}{found['version']}); the oldest runtime measured to load it: {oldest}"
