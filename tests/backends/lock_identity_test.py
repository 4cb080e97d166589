"""A backend lock's identity (in the key of every action that uses its packages) names the CPU's
features only where the backend compiles for the CPU at hand, so an Arm lowering's key is the same on
any machine and a remote cache shared by Intel and AMD machines serves it."""

from runfiles import Runfiles

from exporter.core import backends

RUNFILES = Runfiles.Create()


def _identity(lock):
    with open(RUNFILES.Rlocation(f"torch_export_backend_{lock}/identity.txt"), encoding="utf-8") as f:
        return f.read().splitlines()


def _per_machine(lock):
    return any(record.per_machine for record in backends.BY_NAME.values() if record.lock == lock)


def test_only_a_per_machine_lock_names_the_cpu():
    for lock in ("arm", "openvino"):
        cpu_lines = [line for line in _identity(lock) if line.startswith("cpu ")]
        assert len(cpu_lines) == (1 if _per_machine(lock) else 0), (lock, cpu_lines)


def test_openvino_is_the_per_machine_one_and_arm_is_not():
    assert _per_machine("openvino") and not _per_machine("arm")
