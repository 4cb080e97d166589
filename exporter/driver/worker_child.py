"""The child side of every request: one request, run in a process forked from the warm parent
(worker.py) or from the one-shot command line (cli.py), whose result comes back through a pipe.

The parent holds the request's deadline: past it, it kills the child's process group and answers
in one line. In the worker, a child whose request lists its inputs (Bazel's WorkRequest.inputs)
runs in a private folder of those inputs only (input_tree.py), as the sandbox would.
"""

import os
import select
import signal
import struct
import time

from exporter.driver import input_tree, isolation, request


def _die_with_parent():
    """Asks Linux to kill this child when the worker dies, so no orphan writes outputs later."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # 1 is PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


# The parent runs single-threaded: a process that forks after OpenMP started its thread pool
# gives children that hang in their first parallel region (seen cloning ResNet-18's weights).
# Children get the thread count torch would have used. None in a one-shot parent (no torch).
_CHILD_THREADS = None


def single_threaded_parent():
    """Call in the parent before the first fork."""
    global _CHILD_THREADS
    import torch

    _CHILD_THREADS = torch.get_num_threads()  # reads the setting; starts no threads
    torch.set_num_threads(1)


def _restore_threads():
    if _CHILD_THREADS is not None:
        import torch

        torch.set_num_threads(_CHILD_THREADS)


def _run_here(work_request, execroot):
    """The child's work: (exit code, text) of the request, isolated as the module docstring says."""
    cache_dir = isolation.private_cache_dir()
    blocked = isolation.block_network()  # workers run outside Bazel's sandbox
    arguments = work_request.get("arguments", [])
    inputs = [i["path"] for i in work_request.get("inputs", [])]
    if inputs:
        try:
            arguments = request.expand_params(arguments)  # the params file is not an input
            tree = input_tree.build(os.path.join(cache_dir, "execroot"), execroot, inputs)
            input_tree.enter(tree, execroot)
        except (OSError, input_tree.InputPathError) as e:
            return 1, f"exporter worker: cannot set up the request's inputs: {e}\n"
    code, text = request.run(arguments, output_root=execroot, network_blocked=blocked)
    os.chdir(execroot)
    isolation.remove_dir(cache_dir)
    return code, text


class Child:
    """One request running in a forked child.

    peek is the parent's request.Peek of it; protocol_fd, the parent's channel to Bazel (closed
    in the child), or None for a one-shot run.
    """

    def __init__(self, work_request, protocol_fd, peek):
        self.request, self.peek = work_request, peek
        self.deadline = time.monotonic() + peek.deadline
        self.stopped = None  # why the parent killed it, if it did: its answer, or "" for none
        self.data = b""
        execroot = os.getcwd()
        read_end, write_end = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.setpgid(0, 0)  # a group of its own: a deadline kills what the model started too
            _die_with_parent()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's handler is not ours
            _restore_threads()
            os.close(read_end)
            if protocol_fd is not None:
                os.close(protocol_fd)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # stdin carries the parent's requests
            code, text = 1, "exporter worker: the request did not finish\n"
            try:
                code, text = _run_here(work_request, execroot)
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

    def stop(self, answer):
        """Kills the child and everything it started; answer is its response's text, or None
        for a request that gets no response."""
        self.stopped = answer or ""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def stop_if_late(self, now):
        if self.stopped is None and now >= self.deadline:
            self.stop(
                f"ERROR: {self.peek.label}: the exporter ran past this action's deadline of "
                f"{self.peek.deadline} s and was stopped; if the target needs longer, set "
                f"`deadline = <seconds>` on {self.peek.label} or pass "
                f"--@rules_torch_export//rules:exporter_deadline=<seconds>\n"
            )

    def response(self):
        """Reaps the child; returns its WorkResponse, or None if it gets none (see stop)."""
        os.close(self.fd)
        _, status = os.waitpid(self.pid, 0)
        if self.stopped == "":
            return None
        code, output = (1, self.stopped) if self.stopped else _result(self.data, status, self.peek)
        return {"exitCode": code, "output": output, "requestId": self.request.get("requestId", 0)}


def _result(data, status, peek):
    """(exit code, output) from what a child wrote and how it ended."""
    if len(data) >= 8:
        code, size = struct.unpack("<iI", data[:8])
        return code, data[8 : 8 + size].decode("utf-8", "replace")
    if os.WIFSIGNALED(status):
        how = f"was killed by signal {signal.Signals(os.WTERMSIG(status)).name}"
    else:
        how = f"exited with status {os.WEXITSTATUS(status)} (os._exit in model code?)"
    action = peek.action
    one_shot = f"--strategy={action.mnemonic}=sandboxed" if action else "--spawn_strategy=sandboxed"
    return 1, (
        f"ERROR: {peek.label}: the exporter process {how} while running this target's model code; "
        f"the crash is in the model or an op it calls: reproduce it outside the worker with "
        f"`bazel build {peek.label} {one_shot}`\n"
    )


def run_one_shot(arguments):
    """Runs one request in a child, as a worker would, and waits for it within its deadline;
    returns (exit code, text for stderr)."""
    child = Child({"arguments": arguments}, None, request.Peek(arguments, os.getcwd()))
    while True:
        child.stop_if_late(time.monotonic())
        timeout = None if child.stopped is not None else max(0.0, child.deadline - time.monotonic())
        ready, _, _ = select.select([child.fd], [], [], timeout)
        if ready and not child.read():
            response = child.response()
            return response["exitCode"], response["output"]
