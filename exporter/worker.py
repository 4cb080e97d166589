"""Bazel persistent worker (JSON protocol) for the exporter.

A warm parent imports torch and ExecuTorch and runs a tiny export or lowering once. Each
WorkRequest runs in a child forked from it, so one model's imports, registered custom ops,
global torch state or crash never reach the next request, and the parent's memory does not
grow. A child's result comes back through a pipe; the parent answers Bazel with one JSON line
per request.

Bazel 4.2.3 writes requests without a trailing newline, so requests are decoded from a byte
stream with JSONDecoder.raw_decode instead of read line by line.
"""

import json
import os
import signal
import struct
import sys


def _tiny_program():
    """A small dynamic-batch ExportedProgram with the ops most models use."""
    import torch

    class Warm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3)
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, x):
            return self.linear(torch.relu(self.conv(x)).mean((2, 3)))

    batch = torch.export.Dim("batch", min=1, max=4)
    return torch.export.export(Warm(), (torch.randn(2, 3, 8, 8),), dynamic_shapes=({0: batch},))


def warm_up(command):
    """Runs a tiny export (and, for a lowering worker, a lowering) so forked children start warm.

    The first export and lowering in a process pay for lazy imports and one-time set-up (about
    3 s of a tiny model's 4 s); children forked afterwards pay it no more. Bazel keeps one
    worker pool per mnemonic, so each worker warms up only for its own command.
    """
    import tempfile

    import torch

    from exporter import export, lower  # noqa: F401  (imported here for the children)

    ep = _tiny_program()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "warm.pt2")
        torch.export.save(ep, path)
        if command == "lower":
            loaded = torch.export.load(path)
            lower.lower(loaded, ["xnnpack"])
            lower.lower(loaded, [])


def read_requests(fd=0):
    """Yields WorkRequest dicts from a stream of concatenated JSON objects."""
    decoder = json.JSONDecoder()
    buffer = ""
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return
        buffer += chunk.decode("utf-8")
        while True:
            buffer = buffer.lstrip()
            if not buffer:
                break
            try:
                request, end = decoder.raw_decode(buffer)
            except json.JSONDecodeError:
                break  # an incomplete object: read more
            buffer = buffer[end:]
            yield request


def _label_of(arguments):
    """The target label from a request's config, for errors about a crashed child."""
    from exporter import cli

    try:
        args = cli.expand_params(arguments)
        with open(args[1], encoding="utf-8") as f:
            return json.load(f).get("label", "?")
    except Exception:
        return "?"


def _die_with_parent():
    """Asks Linux to kill this child when the worker dies, so no orphan writes outputs later."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # 1 is PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


# The parent runs single-threaded: a process that forks after OpenMP started its thread pool
# gives children that hang in their first parallel region (seen cloning ResNet-18's weights).
# Children get the thread count torch would have used.
_CHILD_THREADS = None


def _single_threaded_parent():
    global _CHILD_THREADS
    import torch

    _CHILD_THREADS = torch.get_num_threads()  # reads the setting; starts no threads
    torch.set_num_threads(1)


def _restore_threads():
    import torch

    torch.set_num_threads(_CHILD_THREADS)


def run_in_child(arguments, protocol_fd):
    """Runs one request in a forked child; returns (exit code, output)."""
    from exporter import cli, hermetic

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        _die_with_parent()
        _restore_threads()
        os.close(read_end)
        os.close(protocol_fd)
        code, text = 1, "exporter worker: the request did not finish\n"
        try:
            cache_dir = hermetic.private_cache_dir()
            hermetic.block_network()  # workers run outside Bazel's sandbox
            code, text = cli.run_request(arguments)
            hermetic.remove_dir(cache_dir)
        finally:
            payload = text.encode("utf-8")
            os.write(write_end, struct.pack("<iI", code, len(payload)))
            view = memoryview(payload)
            while view:
                view = view[os.write(write_end, view):]
            os.close(write_end)
            os._exit(0)  # skip atexit handlers and buffers inherited from the parent
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if len(data) >= 8:
        code, size = struct.unpack("<iI", data[:8])
        return code, data[8 : 8 + size].decode("utf-8", "replace")
    label = _label_of(arguments)
    if os.WIFSIGNALED(status):
        how = f"was killed by signal {signal.Signals(os.WTERMSIG(status)).name}"
    else:
        how = f"exited with status {os.WEXITSTATUS(status)} (os._exit in model code?)"
    return 1, (
        f"ERROR: {label}: the exporter process {how} while running this target's model code; "
        f"the crash is in the model or an op it calls: reproduce with "
        f"`bazel build {label} --strategy=TorchExport=sandboxed --strategy=ExecuTorchLower=sandboxed`\n"
    )


def source_digest():
    """sha256 of the exporter's own sources, as they are now on disk."""
    import hashlib

    folder = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as f:
                digest.update(name.encode() + b"\0" + f.read())
    return digest.hexdigest()


def run_one_shot(arguments):
    """Runs a request in a fresh interpreter, with the exporter code now on disk."""
    import subprocess

    main = os.path.join(os.path.dirname(os.path.abspath(__file__)), "main.py")
    done = subprocess.run([sys.executable, main, *arguments], capture_output=True, text=True)
    return done.returncode, done.stderr


def serve(command):
    """The worker loop: one JSON WorkResponse line per WorkRequest, until stdin closes.

    command ("export" or "lower") is what this worker's requests will do, for warm_up().
    """
    # Keep the protocol channel private: anything printed during warm-up goes to stderr.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    from exporter import hermetic

    hermetic.private_cache_dir()
    _single_threaded_parent()
    started_with = source_digest()
    warm_up(command)
    for request in read_requests():
        arguments = request.get("arguments", [])
        # Bazel 4.2.3 keeps a worker whose tool files changed (an edited or upgraded exporter).
        # Its warm state is stale then: answer from a fresh interpreter, and exit, so that Bazel
        # starts a worker with the new code for the next request.
        stale = source_digest() != started_with
        code, output = run_one_shot(arguments) if stale else run_in_child(arguments, protocol.fileno())
        response = {"exitCode": code, "output": output, "requestId": request.get("requestId", 0)}
        protocol.write(json.dumps(response) + "\n")
        protocol.flush()
        if stale:
            break
    return 0
