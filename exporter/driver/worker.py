"""Bazel persistent worker (JSON protocol) for the exporter.

A warm parent imports torch and ExecuTorch and runs a tiny export or lowering once. Each
WorkRequest runs in a child forked from it, so one model's imports, registered custom ops,
global torch state or crash never reach the next request, and the parent's memory does not
grow. A child's result comes back through a pipe (exporter/worker_child.py); the parent answers
Bazel with one JSON line per request.

The worker is multiplexed: Bazel sends all of a mnemonic's concurrent requests to one worker
process, so a clean build pays the warm-up (about 18 s of CPU for a lowering worker) once
instead of once per concurrent action.

Bazel 4.2.3 writes requests without a trailing newline, so requests are decoded from a byte
stream with JSONDecoder.raw_decode instead of read line by line.
"""

import codecs
import json
import os
import select
import sys

from exporter.driver import worker_child


def warm_up(command):
    """Runs the warm_up() of the action `command` (its module's, see actions.configs.ACTIONS),
    so that the children forked afterwards start warm.

    The first export and lowering in a process pay for lazy imports and one-time set-up (about
    3 s for an export, 11 s for an XNNPACK lowering); children forked afterwards pay it no more.
    Bazel keeps one worker per mnemonic, so each worker warms up only for its own action.
    """
    import importlib

    from exporter.actions import configs

    action = configs.ACTIONS.get(command)
    if action is not None and action.worker:
        importlib.import_module(action.module).warm_up()


class RequestReader:
    """Decodes WorkRequests from a byte stream of concatenated JSON objects."""

    def __init__(self, pending=""):
        self._decoder = json.JSONDecoder()
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self.buffer = pending  # text not yet decoded into a request

    def feed(self, chunk):
        """Adds bytes read from stdin; returns the requests they completed."""
        self.buffer += self._utf8.decode(chunk)
        requests = []
        while True:
            self.buffer = self.buffer.lstrip()
            try:
                request, end = self._decoder.raw_decode(self.buffer)
            except json.JSONDecodeError:
                return requests  # empty, or an incomplete object: wait for more
            self.buffer = self.buffer[end:]
            requests.append(request)


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


def _restart(protocol, original_env, pending):
    """Replaces this process with a fresh worker, which runs the exporter code now on disk.

    The pid, stdin and the protocol channel stay, so Bazel sees the same worker answer.
    """
    os.dup2(protocol.fileno(), 1)
    env = dict(original_env, **{_PENDING_VARIABLE: pending})
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)


def serve(command):
    """The worker loop: a JSON WorkResponse line for each WorkRequest, until stdin closes.

    Requests may arrive while others run (Bazel multiplexes them, with distinct requestIds):
    each runs in its own child and is answered when it ends. The parent stays one thread and
    waits in select() on stdin and the children's pipes. command ("export" or "lower") is what
    this worker's requests will do, for warm_up().
    """
    from exporter.driver import isolation

    original_env = dict(os.environ)
    reader = RequestReader(os.environ.pop(_PENDING_VARIABLE, ""))
    # Keep the protocol channel private: anything printed during warm-up goes to stderr.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    isolation.sweep_dead_private_dirs()  # left by workers that were SIGKILLed
    cache_dir = isolation.private_cache_dir()  # children's private folders are made inside it
    try:
        isolation.exit_on_sigterm()  # Bazel stops idle workers with SIGTERM
        worker_child.single_threaded_parent()
        started_with = source_digest()
        warm_up(command)
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
                pending = "".join(json.dumps(r) for r in queued) + reader.buffer
                _restart(protocol, original_env, pending)
            while queued and not stale:
                child = worker_child.Child(queued.pop(0), protocol.fileno())
                running[child.fd] = child
            watched = list(running) + ([0] if stdin_open and not stale else [])
            for fd in select.select(watched, [], [])[0]:
                if fd == 0:
                    chunk = os.read(0, 1 << 16)
                    stdin_open = bool(chunk)
                    queued += reader.feed(chunk)
                elif not running[fd].read():
                    response = running.pop(fd).response()
                    protocol.write(json.dumps(response) + "\n")
                    protocol.flush()
    finally:
        isolation.remove_dir(cache_dir)
    return 0
