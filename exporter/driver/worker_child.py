"""The child side of the persistent worker: one request, run in a process forked from the
warm parent (worker.py), whose result comes back through a pipe.
"""

import os
import signal
import struct

from exporter.driver import isolation, request


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


def single_threaded_parent():
    """Call in the parent before the first fork."""
    global _CHILD_THREADS
    import torch

    _CHILD_THREADS = torch.get_num_threads()  # reads the setting; starts no threads
    torch.set_num_threads(1)


def _restore_threads():
    import torch

    torch.set_num_threads(_CHILD_THREADS)


class Child:
    """One request running in a child forked from the warm parent."""

    def __init__(self, work_request, protocol_fd):
        self.request = work_request
        self.data = b""
        read_end, write_end = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            _die_with_parent()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's handler is not ours
            _restore_threads()
            os.close(read_end)
            os.close(protocol_fd)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # stdin carries the parent's requests
            code, text = 1, "exporter worker: the request did not finish\n"
            try:
                cache_dir = isolation.private_cache_dir()
                isolation.block_network()  # workers run outside Bazel's sandbox
                code, text = request.run(self.request.get("arguments", []))
                isolation.remove_dir(cache_dir)
            finally:
                payload = text.encode("utf-8")
                os.write(write_end, struct.pack("<iI", code, len(payload)))
                view = memoryview(payload)
                while view:
                    view = view[os.write(write_end, view):]
                os.close(write_end)
                os._exit(0)  # skip atexit handlers and buffers inherited from the parent
        os.close(write_end)
        self.fd = read_end

    def read(self):
        """Reads what the child wrote; returns False once it closed its end (exited)."""
        chunk = os.read(self.fd, 1 << 16)
        self.data += chunk
        return bool(chunk)

    def response(self):
        """Reaps the child; returns its WorkResponse."""
        os.close(self.fd)
        _, status = os.waitpid(self.pid, 0)
        code, output = _result(self.data, status, self.request.get("arguments", []))
        return {"exitCode": code, "output": output, "requestId": self.request.get("requestId", 0)}


def _result(data, status, arguments):
    """(exit code, output) from what a child wrote and how it ended."""
    if len(data) >= 8:
        code, size = struct.unpack("<iI", data[:8])
        return code, data[8 : 8 + size].decode("utf-8", "replace")
    action, label = request.describe(arguments)
    if os.WIFSIGNALED(status):
        how = f"was killed by signal {signal.Signals(os.WTERMSIG(status)).name}"
    else:
        how = f"exited with status {os.WEXITSTATUS(status)} (os._exit in model code?)"
    one_shot = f"--strategy={action.mnemonic}=sandboxed" if action else "--spawn_strategy=sandboxed"
    return 1, (
        f"ERROR: {label}: the exporter process {how} while running this target's model code; "
        f"the crash is in the model or an op it calls: reproduce it outside the worker with "
        f"`bazel build {label} {one_shot}`\n"
    )
