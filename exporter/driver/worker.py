"""Bazel persistent worker for the exporter (protobuf or JSON protocol: work_protocol.py).

A warm parent imports torch and ExecuTorch and runs a tiny export or lowering once. Each
WorkRequest runs in a child forked from it, so one model's imports, registered custom ops,
global torch state or crash never reach the next request, and the parent's memory does not
grow. A child's result comes back through a pipe (worker_child.py); the parent answers Bazel
with one WorkResponse per request.

The worker is multiplexed: Bazel sends all of a mnemonic's concurrent requests to one worker
process, so a clean build pays the warm-up (about 18 s of CPU for a lowering worker) once
instead of once per concurrent action.
"""

import base64
import os
import select
import sys
import time

from exporter.driver import work_protocol, worker_child


def warm_up(command):
    """Runs the warm_up() of the action `command` (its module's, see actions.registry.ACTIONS),
    so that the children forked afterwards start warm.

    The first export and lowering in a process pay for lazy imports and one-time set-up (about
    3 s for an export, 11 s for an XNNPACK lowering); children forked afterwards pay it no more.
    Bazel keeps one worker per mnemonic, so each worker warms up only for its own action.
    """
    import importlib

    from exporter.actions import registry

    action = registry.ACTIONS.get(command)
    if action is not None and action.worker:
        importlib.import_module(action.module).warm_up()


# A worker's log line: "<prefix> <command> <process start> <warm-up end>", seconds since the epoch.
WARM_UP_LOG_PREFIX = "rules_torch_export worker warm-up:"


def _process_start():
    """When this process started, in seconds since the epoch (Linux's /proc)."""
    with open("/proc/self/stat") as f:
        ticks = int(f.read().rpartition(")")[2].split()[19])  # field 22: starttime, since boot
    since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)
    return time.time() - (since_boot - ticks / os.sysconf("SC_CLK_TCK"))


# The folders of the exporter package whose files are the toolchain's sources
# (//exporter:exporter_srcs; exporter/imports_test.py checks that the two agree).
SOURCE_FOLDERS = ("", "actions", "core", "driver", "formats")


def source_digest():
    """sha256 of the exporter's own sources (SOURCE_FOLDERS), as they are now on disk."""
    import hashlib

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = hashlib.sha256()
    for folder in SOURCE_FOLDERS:
        path = os.path.join(root, folder)
        for name in sorted(os.listdir(path)):
            if name.endswith(".py") and not name.endswith("_test.py"):
                with open(os.path.join(path, name), "rb") as f:
                    digest.update(f"{folder}/{name}".encode() + b"\0" + f.read())
    return digest.hexdigest()


# A restarted worker finds the requests its predecessor had read but not started here.
_PENDING_VARIABLE = "RULES_TORCH_EXPORT_WORKER_PENDING"


def _restart(channel, original_env, reader, queued):
    """Replaces this process with a fresh worker, which runs the exporter code now on disk, and
    hands it the requests not yet started (queued, then what the reader holds undecoded).

    The pid, stdin and the protocol channel stay, so Bazel sees the same worker answer.
    """
    pending = b"".join(reader.encode(r) for r in queued) + reader.undecoded()
    os.dup2(channel.fileno(), 1)
    env = dict(original_env, **{_PENDING_VARIABLE: f"{reader.protocol}:{base64.b64encode(pending).decode()}"})
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)


def _reader():
    """The request reader, with what a restarted worker's predecessor left it."""
    protocol, _, pending = os.environ.pop(_PENDING_VARIABLE, "").partition(":")
    return work_protocol.Reader(base64.b64decode(pending), protocol or None)


def serve(command):
    """The worker loop: a WorkResponse for each WorkRequest, until stdin closes.

    Requests may arrive while others run (Bazel multiplexes them, with distinct requestIds):
    each runs in its own child and is answered when it ends. The parent stays one thread and
    waits in select() on stdin and the children's pipes. command (an action's, e.g. "lower") is
    what this worker's requests will do, for warm_up().
    """
    from exporter.driver import isolation

    original_env = dict(os.environ)
    reader = _reader()
    # Keep the protocol channel private: anything printed during warm-up goes to stderr.
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    isolation.sweep_dead_private_dirs()  # left by workers that were SIGKILLed
    cache_dir = isolation.private_cache_dir()  # children's private folders are made inside it
    try:
        isolation.exit_on_sigterm()  # Bazel stops idle workers with SIGTERM
        worker_child.single_threaded_parent()
        started_with = source_digest()
        warm_up(command)
        # For the bench's critical-path report (bench/critical_path.py), in the worker's log.
        print(f"{WARM_UP_LOG_PREFIX} {command} {_process_start():.3f} {time.time():.3f}", file=sys.stderr, flush=True)
        queued = reader.feed(b"")
        running = {}  # pipe fd -> worker_child.Child
        stdin_open = True
        while stdin_open or queued or running:
            # Bazel 4.2.3 keeps a worker whose tool files changed (an edited or upgraded
            # exporter). Its warm state is stale then: let the running children finish, then
            # restart with the new code and hand it the requests not yet started.
            stale = bool(queued) and source_digest() != started_with
            if stale and not running:
                isolation.remove_dir(cache_dir)
                _restart(channel, original_env, reader, queued)
            while queued and not stale:
                child = worker_child.Child(queued.pop(0), channel.fileno())
                running[child.fd] = child
            watched = list(running) + ([0] if stdin_open and not stale else [])
            for fd in select.select(watched, [], [])[0]:
                if fd == 0:
                    chunk = os.read(0, 1 << 16)
                    stdin_open = bool(chunk)
                    queued += reader.feed(chunk)
                elif not running[fd].read():
                    response = running.pop(fd).response()
                    channel.write(work_protocol.encode_response(response, reader.protocol))
                    channel.flush()
    finally:
        isolation.remove_dir(cache_dir)
    return 0
