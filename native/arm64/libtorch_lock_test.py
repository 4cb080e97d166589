"""The lock of the aarch64 libtorch that ExecuTorch's LLM operators and 1.3's and 1.4's bindings load on arm64
(toolchain/libtorch_aarch64.lock) has the shape libtorch_aarch64.bzl needs, checked in every build
without its 2.5 GB download (only the nightly tier's arm64 runs of llm_ops programs fetch it):
every wheel and Debian package pinned by sha256, the toolchain's torch version, and the libpython of
the Python the aarch64 wheels are for."""

import re

from runfiles import Runfiles

RUNFILES = Runfiles.Create()
WHEEL = re.compile(r"^([A-Za-z0-9_.-]+)==([^ ]+) --hash=sha256:[0-9a-f]{64}$")
DEB = re.compile(r"^debian:pool/main/[a-z0-9]/[a-z0-9.+-]+/([a-z0-9.+-]+)_([^_]+)_arm64\.deb --hash=sha256:[0-9a-f]{64}$")


def _lines(path):
    with open(RUNFILES.Rlocation("rules_torch_export/" + path), encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


LOCK = _lines("toolchain/libtorch_aarch64.lock")
WHEELS = {m.group(1): m.group(2) for m in map(WHEEL.match, LOCK) if m}
DEBS = {m.group(1): m.group(2) for m in map(DEB.match, LOCK) if m}


def test_every_line_is_a_hashed_wheel_or_debian_package_once():
    assert [line for line in LOCK if not WHEEL.match(line) and not DEB.match(line)] == []
    assert len(WHEELS) + len(DEBS) == len(LOCK)


def test_torch_is_the_toolchains_version():
    toolchain = [line.split(" ")[0] for line in _lines("toolchain/requirements.lock") if line.startswith("torch==")]
    assert [WHEELS["torch"]] == [pin.split("==")[1].split("+")[0] for pin in toolchain]


def test_libpython_is_the_aarch64_wheels_python_with_what_it_loads():
    # libtorch_aarch64.bzl takes the wheels' Python from executorch_aarch64.bzl.
    with open(RUNFILES.Rlocation("rules_torch_export/toolchain/executorch_aarch64.bzl"), encoding="utf-8") as f:
        python = re.search(r'^WHEEL_PYTHON = "(.*)"$', f.read(), re.M)
    assert python
    assert set(DEBS) == {"libpython" + python.group(1), "zlib1g", "libexpat1"}


def test_no_executorch_of_its_own():
    # The executorch wheel is the one executorch_aarch64.lock pins: the runtime's own.
    assert "executorch" not in WHEELS


def _arm64_binding_locks():
    # exporter/lock_facts.bzl's ARM64_BINDING_LOCKS: the locks whose binding has an arm64 build.
    with open(RUNFILES.Rlocation("rules_torch_export/exporter/lock_facts.bzl"), encoding="utf-8") as f:
        block = re.search(r"^ARM64_BINDING_LOCKS = \{(.*?)^\}", f.read(), re.M | re.S)
    assert block
    return re.findall(r'^\s+"([a-z0-9_]+)":', block.group(1), re.M)


def _versions(lines):
    return {m.group(1): m.group(2).split("+")[0] for m in map(WHEEL.match, lines) if m}


def test_each_release_binding_pin_is_the_releases_wheel():
    # toolchain/releases/<lock>_aarch64.lock pins the aarch64 wheel of the same version as the
    # release's own lock, and any wheel of the aarch64 libtorch's lock that the release's runtimes
    # replace (1.3's torch 2.12) at their version: libtorch_aarch64.bzl puts it in that one's place.
    locks = _arm64_binding_locks()
    assert "executorch_1_3_runtime" in locks and "executorch_1_4" in locks
    for lock in locks:
        pins = _lines(f"toolchain/releases/{lock}_aarch64.lock")
        assert [line for line in pins if not WHEEL.match(line)] == [], lock
        aarch64, release = _versions(pins), _versions(_lines(f"toolchain/releases/{lock}.lock"))
        assert "executorch" in aarch64, lock
        assert set(aarch64) - {"executorch"} <= set(WHEELS), lock
        assert aarch64 == {name: release[name] for name in aarch64}, lock
