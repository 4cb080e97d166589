"""The child side of every request: one request, run in a process forked from the warm parent
(worker.py) or from the one-shot command line (cli.py), whose result comes back through a pipe.

The child keeps only its end of that pipe (not the other children's, nor the worker's channel),
dies with its parent, and gets what Bazel's sandbox gives a spawn (isolation.contain): no network,
a read-only view of the machine but for its temp folder and its outputs' folders, and a PID
namespace, under whose init the request runs, so that everything it starts dies with it. The
parent holds the request's deadline: past it, it kills the child's process group (and with it the
namespace's init) and answers in one line. In the worker, a child whose request lists its inputs
(Bazel's WorkRequest.inputs) runs in a private folder of those inputs only (input_tree.py), as
the sandbox would.
"""

import os
import select
import signal
import struct
import time

from exporter.driver import input_tree, isolation, namespaces, request

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


def _keep_only(fd):
    """Closes every descriptor but stdin, stdout, stderr and fd: the read ends of the other
    children's pipes (which would let this request read, and so take, their answers), the
    worker's channel to Bazel, and whatever else the parent holds."""
    for name in os.listdir("/proc/self/fd"):
        if int(name) > 2 and int(name) != fd:
            try:
                os.close(int(name))
            except OSError:
                pass  # the listing's own descriptor, closed already
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # stdin carries the parent's requests
    isolation.forget_owner_locks()


def _run_here(work_request, execroot, cache_dir, log_dir, gaps):
    """The request's work: (exit code, text), in a private folder of its inputs where it lists them."""
    _restore_threads()
    arguments = work_request.get("arguments", [])
    inputs = [i["path"] for i in work_request.get("inputs", [])]
    if inputs:
        try:
            arguments = request.expand_params(arguments)  # the params file is not an input
            tree = input_tree.build(os.path.join(cache_dir, "execroot"), execroot, inputs)
            input_tree.enter(tree, execroot)
        except (OSError, ValueError) as e:
            return 1, f"exporter worker: cannot set up the request's inputs: {e}\n"
    code, text = request.run(arguments, output_root=execroot, gaps=gaps, log_dir=log_dir)
    os.chdir(execroot)
    return code, text


def _answer(fd, code, text):
    """Sends (code, text) to the parent and ends this process."""
    payload = text.encode("utf-8")
    os.write(fd, struct.pack("<iI", code, len(payload)))
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]
    os.close(fd)
    os._exit(0)  # skip atexit handlers and buffers inherited from the parent


def _child(work_request, execroot, peek, cache_dir, parent, write_end):
    """The forked child's life, in the private folder cache_dir; never returns."""
    os.setpgid(0, 0)  # a group of its own: the parent kills the group (where no PID namespace can be had)
    namespaces.die_with_parent(lambda: os.getppid() == parent)  # no orphan writes outputs later
    _keep_only(write_end)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's handler is not ours
    code, text = 1, "exporter worker: the request did not finish\n"
    try:
        log_dir = None if "log" in peek.roles else isolation.private_log_dir()
        isolation.enter_private_dir(cache_dir)
        gaps = isolation.contain([cache_dir, log_dir, *peek.output_dirs])
        if isolation.PROCESSES not in gaps:
            namespaces.run_in_pid_namespace(
                lambda: _answer(write_end, *_run_here(work_request, execroot, cache_dir, log_dir, gaps)),
                close=(write_end,))
        code, text = _run_here(work_request, execroot, cache_dir, log_dir, gaps)
    finally:
        _answer(write_end, code, text)


class Child:
    """One request running in a forked child.

    peek is the parent's request.Peek of it.
    """

    def __init__(self, work_request, peek):
        self.request, self.peek = work_request, peek
        self.deadline = time.monotonic() + peek.deadline
        self.stopped = None  # why the parent killed it, if it did: its answer, or "" for none
        self.data = b""
        execroot, parent = os.getcwd(), os.getpid()
        self.private = isolation.new_private_dir()  # removed here once the child is gone
        read_end, write_end = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            _child(work_request, execroot, peek, self.private, parent, write_end)
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
                f"--{self.peek.deadline_flag}=<seconds>\n"
            )

    def response(self):
        """Reaps the child; returns its WorkResponse, or None if it gets none (see stop)."""
        os.close(self.fd)
        _, status = os.waitpid(self.pid, 0)
        isolation.remove_dir(self.private)
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
    child = Child({"arguments": arguments}, request.Peek(arguments, os.getcwd()))
    while True:
        child.stop_if_late(time.monotonic())
        timeout = None if child.stopped is not None else max(0.0, child.deadline - time.monotonic())
        ready, _, _ = select.select([child.fd], [], [], timeout)
        if ready and not child.read():
            response = child.response()
            return response["exitCode"], response["output"]
