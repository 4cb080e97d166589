"""What Bazel's linux-sandbox gives a spawn, given to a request's child by the kernel: its own
network, mount and PID namespaces (Linux only).

- network: a namespace whose only interface is a loopback that is down, so every connection
  fails at once (isolation.block_network);
- files: a mount namespace in which every mount is read-only but the request's temp folder and
  the folders of its declared outputs (read_only_except); model code that writes beside its
  sources or into another target's outputs gets EROFS, as under linux-sandbox;
- processes: a PID namespace whose first process (the namespace's init) the request's own
  process runs under (run_in_pid_namespace); when the init dies, the kernel kills every process
  left in the namespace, including those that left the request's process group or session.

root enters them directly. Other users enter them inside a new user namespace, which the kernel
allows only to a single-threaded process (a child right after fork is) and only once: after it,
the process holds every capability of its own user namespace, which the others need. Each
function says whether it worked; where the kernel refuses (a container whose seccomp profile
refuses unshare), the request runs without that namespace and its log and manifest say so
(driver/request.py).
"""

import ctypes
import os
import re
import resource
import select
import signal
import struct

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def unshare(kind):
    """Moves this process into a new namespace of kind (a CLONE_NEW* flag; for CLONE_NEWPID, its
    children to come), directly or inside a new user namespace; returns whether it worked."""
    try:
        call = _libc().unshare
    except (OSError, AttributeError):  # not Linux
        return False
    return any(call(flags) == 0 for flags in (kind, CLONE_NEWUSER | kind))


class _MountAttr(ctypes.Structure):
    """struct mount_attr of mount_setattr(2)."""

    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


_SYS_MOUNT_SETATTR = 442  # the same number on every architecture (Linux 5.12)
_AT_FDCWD, _AT_RECURSIVE = -100, 0x8000
_MOUNT_ATTR_RDONLY = 0x1
_MS_BIND, _MS_REC, _MS_PRIVATE = 0x1000, 0x4000, 1 << 18
# Pseudo file systems left as they are: writing there reaches no file of the workspace, and
# torch and Python need them (/dev/null, /dev/shm, /proc/self). linux-sandbox keeps them too.
_KEPT = ("/dev", "/proc", "/sys")


def _set_read_only(point):
    attr = _MountAttr(_MOUNT_ATTR_RDONLY, 0, 0, 0)
    return _libc().syscall(_SYS_MOUNT_SETATTR, _AT_FDCWD, os.fsencode(point), 0, ctypes.byref(attr),
                           ctypes.sizeof(attr)) == 0


def _mount_points():
    """This mount namespace's mount points, from /proc/self/mountinfo (octal escapes decoded)."""
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
        points = [line.split(" ")[4] for line in f if line.strip()]
    return [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), p) for p in points]


def read_only_except(writable):
    """After unshare(CLONE_NEWNS): makes every mount read-only (and private to this namespace, so
    that nothing here reaches the machine's) but the folders in writable, each bound onto itself
    first, and _KEPT. Returns whether it worked (mount_setattr needs Linux 5.12)."""
    libc = _libc()
    if libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return False
    kept = sorted({os.path.realpath(p) for p in writable if p and os.path.isdir(p)})
    for path in kept:
        if libc.mount(os.fsencode(path), os.fsencode(path), None, _MS_BIND | _MS_REC, None) != 0:
            return False
    done = True
    for point in _mount_points():
        if point not in kept and not any(point == k or point.startswith(k + "/") for k in _KEPT):
            done = _set_read_only(point) and done
    return done


_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_alive):
    """Asks Linux to SIGKILL this process when its parent dies, then checks parent_alive(): the
    parent may have died between the fork and the prctl, before the two were tied."""
    try:
        _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if not parent_alive():
        os._exit(1)


def has_reader(fd):
    """Whether the pipe whose write end is fd still has a reader (poll reports POLLERR if not)."""
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return not any(events & select.POLLERR for _, events in poller.poll(0))


def run_in_pid_namespace(body, close=()):
    """After unshare(CLONE_NEWPID): runs body() (which must end its process) in a grandchild, under
    the new namespace's init, and ends this process as the grandchild ended (its exit status or
    its signal). Never returns. The fds in close are closed here and in the init once forked.

    The init (this process's child) only waits: a namespace's init ignores every signal it has
    no handler for, its own os.kill(os.getpid(), SIGSEGV) included, so model code must not run
    as it. When the init exits (the grandchild done, or this process gone: PDEATHSIG), the
    kernel kills every process left in the namespace."""
    status_read, status_write = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(status_read)
        die_with_parent(lambda: has_reader(status_write))  # only this process reads it
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        grandchild = os.fork()
        if grandchild == 0:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.close(status_write)
            body()
            os._exit(1)
        for fd in close:
            os.close(fd)
        os.write(status_write, struct.pack("<i", _reap(grandchild)))
        os._exit(0)
    for fd in (status_write, *close):
        os.close(fd)
    _, init_status = os.waitpid(init, 0)
    with os.fdopen(status_read, "rb") as f:
        data = f.read()
    _end_like(struct.unpack("<i", data)[0] if len(data) == 4 else init_status)


def _reap(pid):
    """Waits for pid, reaping the orphans an init inherits meanwhile; returns pid's status."""
    while True:
        try:
            found, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 0
        if found == pid:
            return status


def _end_like(status):
    """Ends this process as the waitpid status says: the same exit status, or the same signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the grandchild's core, if any, was dumped
        if sig not in (signal.SIGKILL, signal.SIGSTOP):  # whose action cannot be set (OSError): the
            signal.signal(sig, signal.SIG_DFL)  # OOM killer's SIGKILL read "exited with status 1"
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)
