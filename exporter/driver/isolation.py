"""Isolation of one exporter run from the machine and from other runs: private caches and
temp folders, what Bazel's sandbox gives a spawn (contain: no network, a read-only view but for
its outputs, a PID namespace), and clean-up after runs that died. The driver sets it up around
every request (worker_child.py, in the worker and one-shot alike)."""

import os
import shutil
import sys
import tempfile

from exporter.driver import namespaces, race_pause

# The temp folder of the user, before private_cache_dir() points TMPDIR at a folder that goes away.
_USER_TMP = tempfile.gettempdir()

# Where torch, Inductor, Triton and the libraries ExecuTorch imports would otherwise keep
# caches shared between runs: under /tmp or $HOME. A cache shared between actions is state one
# action can leave for the next, so each run gets its own and deletes it.
_CACHE_VARIABLES = (
    "TORCHINDUCTOR_CACHE_DIR",
    "TRITON_CACHE_DIR",
    "TRITON_HOME",
    "TORCH_HOME",
    "TORCH_EXTENSIONS_DIR",
    "PYTORCH_KERNEL_CACHE_PATH",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "HF_HOME",
    "CUDA_CACHE_PATH",
    "MPLCONFIGDIR",
    "NUMBA_CACHE_DIR",
    # Last: anything that still writes under `~` writes here.
    "HOME",
)


_PREFIX = "rules_torch_export_"
_OWNER = ".owner"  # locked while its folder is in use; the kernel drops the lock when the owner dies
_owner_locks: dict[str, int] = {}  # folder -> the descriptor that holds its .owner lock


def private_cache_dir():
    """Points every cache variable, TMPDIR and HOME at a fresh folder private to this run.

    Call it before torch is imported. The caller removes the folder with remove_dir().
    """
    root = new_private_dir()
    enter_private_dir(root)
    return root


def new_private_dir():
    """A fresh folder private to one run, held (its .owner lock) by this process until
    remove_dir(). The worker makes one per request before forking its child, and removes it
    after: inside the child's mount namespace the folder is a mount point (namespaces.py), which
    nothing there can remove."""
    root = tempfile.mkdtemp(prefix=_PREFIX)
    _hold_owner_lock(root)
    return root


def enter_private_dir(root):
    """Points every cache variable, TMPDIR and HOME at root. Call it before torch is imported.

    Bytecode writing is switched off too: in unsandboxed runs the model's sources are the user's
    own files, and __pycache__ beside them would be a write outside the action's outputs.
    """
    for name in _CACHE_VARIABLES:
        path = os.path.join(root, name.lower())
        os.makedirs(path, exist_ok=True)
        os.environ[name] = path
    os.environ["TMPDIR"] = root
    tempfile.tempdir = root
    sys.dont_write_bytecode = True


def block_network():
    """Moves this process into a new network namespace, whose only interface is a loopback that
    is down: every connection fails at once, as in Bazel's sandbox with "block-network".

    Bazel blocks the network of sandboxed actions itself, but a persistent worker runs outside
    the sandbox; its forked children call this so that worker mode blocks the network too.
    root creates the namespace directly; other users create it inside a new user namespace,
    which the kernel allows only to a single-threaded process (a child right after fork is).
    Returns whether the process is cut off now: False where the kernel allows neither (a
    container whose seccomp profile refuses unshare, say) and no sandbox did it before.
    """
    namespaces.unshare(namespaces.CLONE_NEWNET)
    return not network_interfaces()


def network_interfaces():
    """The network interfaces this process can use besides the loopback."""
    import socket

    return sorted(name for _, name in socket.if_nameindex() if name != "lo")


# What the kernel may refuse a request (a container whose seccomp profile refuses unshare, a
# kernel before 5.12): gap -> (the manifest's key and value, or None; the log's line).
NETWORK, FILES, PROCESSES = "network", "files", "processes"
GAPS = {
    NETWORK: (("network", "not blocked"), "the network could not be blocked here (no network namespaces: see "
              "docs/failure-modes.md); this action ran with network access"),
    FILES: (("files", "not read-only"), "model code could write outside this action's outputs here (no mount "
            "namespaces or no mount_setattr, Linux 5.12: see docs/failure-modes.md)"),
    PROCESSES: (None, "processes this action starts could outlive it here (no PID namespaces: see "
                "docs/failure-modes.md); they are stopped with its process group only"),
}


def contain(writable):
    """Gives this process (a request's child, single-threaded) what Bazel's sandbox gives a spawn:
    no network, every mount read-only but the folders in writable, and a PID namespace for its
    children to come (namespaces.py). Returns the gaps: the parts the kernel refused."""
    gaps = [] if block_network() else [NETWORK]
    if not (namespaces.unshare(namespaces.CLONE_NEWNS) and namespaces.read_only_except(writable)):
        gaps.append(FILES)
    if not namespaces.unshare(namespaces.CLONE_NEWPID):
        gaps.append(PROCESSES)
    return gaps


def private_log_dir():
    """A new folder of this run's own (mode 0700) in the user's temp folder, for the log of a
    request whose config declares none (a hand-made run). Before: a fixed folder shared by every
    user, /tmp/rules_torch_export-logs, written with an open that follows symlinks."""
    return tempfile.mkdtemp(prefix="rules_torch_export-logs-", dir=_USER_TMP)


def exit_on_sigterm():
    """Turns SIGTERM into SystemExit, so that `finally` blocks still remove private folders."""
    import signal

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def _hold_owner_lock(root):
    """Locks root/.owner for as long as this process (or a child forked from it) lives.

    The file is locked under another name, then renamed: a sweep (another worker's, as the
    warm-up starts two at once) that found .owner created but not yet locked took the folder
    for dead and removed it under its owner."""
    import fcntl

    unlocked = os.path.join(root, _OWNER + ".new")
    fd = os.open(unlocked, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    race_pause.pause("owner_lock")
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(unlocked, os.path.join(root, _OWNER))
    _owner_locks[root] = fd


def forget_owner_locks():
    """In a forked child that closed the descriptors it inherited: the parent holds those locks."""
    _owner_locks.clear()


def remove_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    fd = _owner_locks.pop(path, None)
    if fd is not None:
        os.close(fd)


def sweep_dead_private_dirs(folder=None):
    """Removes the private folders of runs that died without cleaning up (a SIGKILLed worker).

    A folder is dead when nobody holds its .owner lock: flock locks survive no process, and
    work across PID namespaces (sandboxed one-shot runs), where PIDs would not. Returns the
    folders removed.
    """
    import fcntl

    folder = folder or tempfile.gettempdir()
    removed = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        owner = os.path.join(path, _OWNER)
        if not name.startswith(_PREFIX) or not os.path.isfile(owner):
            continue
        try:
            fd = os.open(owner, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # alive
        finally:
            os.close(fd)
        remove_dir(path)
        removed.append(path)
    return removed
