"""The lock of a release's runtimes (exporter/core/releases.py's runtime_lock) has the shape its
venv needs, checked in every build without installing it (toolchain/runtime_venv_repository.bzl
installs it only for the nightly tier's cells): every wheel pinned with its sha256; the very
executorch wheel the release lowers with; a torch other than the toolchain's, which is why the
venv exists; and the toolchain's versions of every other package both locks hold."""

import re

from runfiles import Runfiles

from exporter.core import releases

RUNFILES = Runfiles.Create()
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^ ]+) --hash=sha256:[0-9a-f]{64}$")


def _lines(path):
    with open(RUNFILES.Rlocation("rules_torch_export/" + path), encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def _pins(path):
    """{normalised name: the whole pin line} of a lock."""
    return {re.split("[=<> ]", line)[0].lower().replace("_", "-"): line for line in _lines(path)}


def _version(line):
    return line.split("==")[1].split(" ")[0]


RUNTIME_RELEASES = [r for r in releases.RECORDS if r.runtime_lock]


def test_a_release_has_runtimes_of_its_own():
    assert [r.name for r in RUNTIME_RELEASES] == ["1.3"]


def test_every_pin_is_a_hashed_wheel_once():
    for release in RUNTIME_RELEASES:
        lines = _lines(f"toolchain/releases/{release.runtime_lock}.lock")
        assert [line for line in lines if not PIN.match(line)] == [], release.name
        assert len(_pins(f"toolchain/releases/{release.runtime_lock}.lock")) == len(lines), release.name


def test_the_runtimes_run_the_wheel_that_lowers():
    for release in RUNTIME_RELEASES:
        runtime = _pins(f"toolchain/releases/{release.runtime_lock}.lock")
        assert runtime["executorch"] == _pins(f"toolchain/releases/{release.lock}.lock")["executorch"]
        assert _version(runtime["executorch"]) == release.version


def test_the_runtimes_have_their_own_torch_and_the_toolchains_other_versions():
    toolchain = {name: _version(line) for name, line in _pins("toolchain/requirements.lock").items()}
    for release in RUNTIME_RELEASES:
        runtime = {name: _version(line) for name, line in _pins(f"toolchain/releases/{release.runtime_lock}.lock").items()}
        assert runtime["torch"] != toolchain["torch"], "a runtime on the toolchain's torch needs no venv of its own"
        shared = set(runtime) & set(toolchain) - {"torch", "executorch"}
        assert {n: runtime[n] for n in shared if runtime[n] != toolchain[n]} == {}, release.name
        assert {"numpy", "torchao", "flatbuffers"} <= shared, "what `from executorch.runtime import Runtime` loads"
