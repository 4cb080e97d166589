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
    """Warms this worker for every action it runs: the warm_up() of each module whose action
    has `command`'s worker (actions.registry.ACTIONS), in the registry's order, so that the
    children forked afterwards start warm.

    The first export and lowering in a process pay for lazy imports and one-time set-up (about
    1 s for an export, 2 s for the quantizer after it, 4 s for an XNNPACK lowering, measured
    2026-11-25); children forked afterwards pay it no more. Bazel keeps one worker per worker
    key (exporter_action.bzl): export with quantize and calibrate, and lower with etrecord, so a
    clean build starts two workers at most, warmed side by side.
    """
    import importlib

    from exporter.actions import registry

    modules = [a.module for a in registry.ACTIONS.values() if a.worker and a.worker == command]
    for module in dict.fromkeys(modules):
        warm = getattr(importlib.import_module(module), "warm_up", None)
        if warm is not None:
            warm()


def _freeze_warm_objects():
    """Moves every object the warm-up left (torch's and ExecuTorch's modules, about 440,000) out
    of the garbage collector's reach, so that a child's full collections walk only the objects
    its request made. Without it, each full collection in a lowering walked them all again
    (about 0.5 s each on this project's machines, measured 2026-11-27); the warm objects are
    never garbage. The bytes a request writes do not depend on it."""
    import gc

    gc.collect()
    gc.freeze()


# A worker's log line: "<prefix> <command> <process start> <warm-up end>", seconds since the epoch.
WARM_UP_LOG_PREFIX = "rules_torch_export worker warm-up:"


def _process_start():
    """When this process started, in seconds since the epoch (Linux's /proc)."""
    with open("/proc/self/stat") as f:
        ticks = int(f.read().rpartition(")")[2].split()[19])  # field 22: starttime, since boot
    since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)
    return time.time() - (since_boot - ticks / os.sysconf("SC_CLK_TCK"))


# The folders of the exporter package whose files are the toolchain's sources, and the backends'
# hooks beside it (//exporter:exporter_srcs; exporter/imports_test.py checks that the two agree).
SOURCE_FOLDERS = ("", "actions", "core", "driver", "formats", "../backend_hooks")


def source_digest():
    """sha256 of the exporter's own sources (SOURCE_FOLDERS), as they are now on disk."""
    import hashlib

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = hashlib.sha256()
    for folder in SOURCE_FOLDERS:
        path = os.path.join(root, folder)
        for name in sorted(os.listdir(path)) if os.path.isdir(path) else ():  # a copy of exporter/ alone has no hooks
            if name.endswith(".py") and not name.endswith("_test.py"):
                with open(os.path.join(path, name), "rb") as f:
                    digest.update(f"{folder}/{name}".encode() + b"\0" + f.read())
    return digest.hexdigest()


# A restarted worker finds the requests its predecessor had read but not started in the memory file
# whose descriptor the first variable names (it survives the exec). Not in the variable's value: a
# request lists every declared input, and one that declares a package tree (an ExecuTorch
# release's, a backend's) passes the kernel's 128 KiB limit of one environment string. A worker
# started before that change hands them over as the second variable's value (base64), once.
_PENDING_VARIABLE = "RULES_TORCH_EXPORT_WORKER_PENDING_FILE"
_PENDING_VALUE_VARIABLE = "RULES_TORCH_EXPORT_WORKER_PENDING"


def _restart(channel, original_env, reader, queued):
    """Replaces this process with a fresh worker, which runs the exporter code now on disk, and
    hands it the requests not yet started (queued, then what the reader holds undecoded).

    The pid, stdin and the protocol channel stay, so Bazel sees the same worker answer.
    """
    pending = b"".join(reader.encode(r) for r in queued) + reader.undecoded()
    fd = os.memfd_create("rules_torch_export-worker-pending", 0)  # no close-on-exec
    with os.fdopen(fd, "wb", closefd=False) as f:
        f.write(pending)
    os.dup2(channel.fileno(), 1)
    env = dict(original_env, **{_PENDING_VARIABLE: f"{reader.protocol}:{fd}"})
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)


def _reader():
    """The request reader, with what a restarted worker's predecessor left it."""
    protocol, _, fd = os.environ.pop(_PENDING_VARIABLE, "").partition(":")
    pending = b""
    if fd:
        with os.fdopen(int(fd), "rb") as f:
            f.seek(0)
            pending = f.read()
    elif _PENDING_VALUE_VARIABLE in os.environ:
        protocol, _, value = os.environ.pop(_PENDING_VALUE_VARIABLE).partition(":")
        pending = base64.b64decode(value)
    return work_protocol.Reader(pending, protocol or None)


def _identity_digest(path):
    """sha256 of a toolchain identity file, or None if it cannot be read."""
    import hashlib

    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except (OSError, TypeError):
        return None


class _Toolchain:
    """The toolchain this process runs on, as its first request's identity file described it.

    Bazel keeps a worker when only the toolchain's identity (an input, not part of the worker's
    key) changes: after a lock change, a warm worker would still hold the old torch and
    ExecuTorch. A request naming other identity bytes makes the worker restart instead.
    """

    def __init__(self):
        self.digest = None

    def changed_for(self, peek):
        digest = _identity_digest(peek.identity) if peek.identity else None
        if digest is None:
            return False
        if self.digest is None:
            self.digest = digest
        return digest != self.digest


def _stop_superseded(running, peek):
    """Stops the running requests that write the outputs of peek's: a newer build runs their
    action again, so they are left over from an interrupted one (Bazel 4.2.3 cannot cancel).

    They get no answer: Bazel no longer waits for them, and it may have given the new request
    the old one's id, so an answer would be taken for the new request's.
    """
    for older in running:
        if older.stopped is None and set(older.peek.outputs) & set(peek.outputs):
            older.stop(None)


def _refusal(work_request, peek):
    """The answer to a request the worker does not run (malformed, or listing no inputs), or None.

    A request without inputs would run in the real execroot, where every file of the workspace
    is visible (input_tree.py); Bazel lists them in every request it sends.
    """
    request_id = work_request.get("requestId", 0)
    if "malformed" in work_request:
        return {"exitCode": 1, "requestId": request_id,
                "output": f"exporter worker: ignored a malformed WorkRequest: {work_request['malformed']}\n"}
    if not work_request.get("inputs"):
        return {"exitCode": 1, "requestId": request_id, "output": (
            f"ERROR: {peek.label}: the exporter worker refuses a WorkRequest that lists no inputs: it runs "
            f"each request in a folder of its declared inputs only, as Bazel's sandbox does; list them "
            f"(WorkRequest.inputs), as Bazel does, or run the request one-shot (main.py COMMAND @PARAMS)\n")}
    return None


class _Loop:
    """The parent's state between select() calls: requests read, children running, and whether
    its warm state went stale."""

    def __init__(self, reader, channel, execroot):
        self.reader, self.channel, self.execroot = reader, channel, execroot
        self.queued = []  # (WorkRequest, request.Peek) not yet started
        self.running = {}  # pipe fd -> worker_child.Child
        self.stdin_open, self.stale = True, False
        self.started_with, self.toolchain = source_digest(), _Toolchain()
        self.accept(reader.feed(b""))

    def answer(self, response):
        self.channel.write(work_protocol.encode_response(response, self.reader.protocol))
        self.channel.flush()

    def accept(self, requests):
        """Takes requests as they arrive: answers those it refuses at once, stops the running
        requests that each one supersedes (whether or not this process will run it: a stale
        worker restarts once no child runs, and a superseded one must not hold it up until its
        deadline), and queues the rest."""
        from exporter.driver import request

        for work_request in requests:
            if work_request.get("cancel"):
                self.cancel(work_request.get("requestId", 0))
                continue
            peek = request.Peek(work_request.get("arguments", []), self.execroot)
            refusal = _refusal(work_request, peek)
            if refusal:
                self.answer(refusal)
                continue
            _stop_superseded(self.running.values(), peek)
            self.queued.append((work_request, peek))

    def cancel(self, request_id):
        """Bazel's cancellation (a worker with supports-worker-cancellation, and
        --experimental_worker_cancellation): stops the request request_id if it has not ended, and
        answers it with was_cancelled, once. A request already answered is left alone, as the
        protocol allows."""
        queued = [entry for entry in self.queued if entry[0].get("requestId", 0) == request_id]
        running = [c for c in self.running.values() if c.request.get("requestId", 0) == request_id and c.stopped is None]
        for entry in queued:
            self.queued.remove(entry)
        for child in running:
            child.stop(None)  # its own response is then None: this is its answer
        if queued or running:
            self.answer({"exitCode": 0, "output": "", "requestId": request_id, "wasCancelled": True})

    def dispatch(self):
        """Starts a child for each queued request, until the warm state is stale.

        Bazel 4.2.3 keeps a worker whose tool files or toolchain changed (an edited exporter, a
        new lock). Its warm state is stale then: the running children finish, then the worker
        restarts with the code and venv now on disk and gets the requests not yet started.
        """
        self.stale = self.stale or (bool(self.queued) and source_digest() != self.started_with)
        while self.queued and not self.stale:
            work_request, peek = self.queued[0]
            self.stale = self.toolchain.changed_for(peek)
            if not self.stale:
                self.queued.pop(0)
                child = worker_child.Child(work_request, peek)
                self.running[child.fd] = child

    def wait(self):
        """Waits for stdin or a child, stopping children past their deadline meanwhile."""
        now = time.monotonic()
        for child in self.running.values():
            child.stop_if_late(now)
        waiting = [c.deadline - now for c in self.running.values() if c.stopped is None]
        watched = list(self.running) + ([0] if self.stdin_open and not self.stale else [])
        for fd in select.select(watched, [], [], max(0.0, min(waiting)) if waiting else None)[0]:
            if fd == 0:
                chunk = os.read(0, 1 << 16)
                self.stdin_open = bool(chunk)
                self.accept(self.reader.feed(chunk))
            elif not self.running[fd].read():
                response = self.running.pop(fd).response()
                if response:
                    self.answer(response)


def serve(command):
    """The worker loop: a WorkResponse for each WorkRequest, until stdin closes.

    Requests may arrive while others run (Bazel multiplexes them, with distinct requestIds):
    each runs in its own child and is answered when it ends, or when the parent stops it (its
    deadline passed, or a newer request writes the same outputs: the old one is left over from
    an interrupted build). The parent stays one thread and waits in select() on stdin and the
    children's pipes. command (an action's, e.g. "lower") is what this worker's requests will do,
    for warm_up().
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
        loop = _Loop(reader, channel, os.getcwd())
        warm_up(command)
        _freeze_warm_objects()
        # For the bench's critical-path report (bench/critical_path.py), in the worker's log.
        print(f"{WARM_UP_LOG_PREFIX} {command} {_process_start():.3f} {time.time():.3f}", file=sys.stderr, flush=True)
        while loop.stdin_open or loop.queued or loop.running:
            loop.dispatch()
            if loop.stale and not loop.running:
                isolation.remove_dir(cache_dir)
                _restart(channel, original_env, reader, [r for r, _ in loop.queued])
            loop.wait()
    finally:
        isolation.remove_dir(cache_dir)
    return 0
