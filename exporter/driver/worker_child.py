"""The child side of every request: one request, run in a process forked from the warm parent
(worker.py) or from the one-shot command line (cli.py), whose result comes back through a pipe.

The child keeps only its end of that pipe (not the other children's, nor the worker's channel),
dies with its parent, and gets what Bazel's sandbox gives a spawn (isolation.contain): no network,
a read-only view of the machine but for its temp folder and its private output folders, and a PID
namespace, under whose init the request runs, so that everything it starts dies with it. It writes
its outputs into those private folders, and the parent moves the declared ones into place once it
succeeded (staging.py). The parent holds the request's deadline: past it, it kills the child's
process group (and with it the namespace's init) and answers in one line. In the worker, a child
whose request lists its inputs (Bazel's WorkRequest.inputs) runs in a private folder of those
inputs only (input_tree.py), as the sandbox would.

The pipe carries records: the phase the request entered (core/phases.py), as it enters it, then
the answer. A child that dies without answering is explained by its last phase.
"""

import json
import os
import select
import signal
import struct
import time

from exporter.core import phases
from exporter.driver import crash, input_tree, isolation, namespaces, race_pause, request, staging

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


def _run_here(work_request, execroot, cache_dir, log_dir, outputs, gaps):
    """The request's work: (exit code, text), in a private folder of its inputs where it lists them;
    its outputs go where outputs (the parent's Staging) puts them."""
    _restore_threads()
    arguments = work_request.get("arguments", [])
    inputs = [i["path"] for i in work_request.get("inputs", [])]
    if outputs.error:
        return 1, f"exporter worker: {outputs.error}\n"
    if inputs:
        try:
            arguments = request.expand_params(arguments)  # the params file is not an input
            tree = input_tree.build(os.path.join(cache_dir, "execroot"), execroot, inputs)
            input_tree.enter(tree, execroot)
        except (OSError, ValueError) as e:
            return 1, f"exporter worker: cannot set up the request's inputs: {e}\n"
    code, text = request.run(arguments, output_root=execroot, gaps=gaps, log_dir=log_dir, place=outputs.path)
    os.chdir(execroot)
    return code, text


# The pipe's records: a phase (its JSON), then the answer (exit code, text), each after its header.
_PHASE, _ANSWER = b"p", b"a"
_HEADERS = {_PHASE: struct.Struct("<I"), _ANSWER: struct.Struct("<iI")}
_PIPE_BUF = 4096  # a write of at most this many bytes reaches a pipe whole (POSIX: PIPE_BUF)


def _send_phase(fd, phase):
    """Tells the parent the phase the request entered (None: none of them)."""
    payload = json.dumps(phase).encode("utf-8")
    if len(payload) > _PIPE_BUF - 5:
        payload = json.dumps({"phase": phase["phase"]}).encode("utf-8")
    os.write(fd, _PHASE + _HEADERS[_PHASE].pack(len(payload)) + payload)
    if phase:
        race_pause.pause("phase-" + phase["phase"])


def _answer(fd, code, text):
    """Sends (code, text) to the parent and ends this process."""
    payload = text.encode("utf-8")
    os.write(fd, _ANSWER + _HEADERS[_ANSWER].pack(code, len(payload)))
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]
    os.close(fd)
    os._exit(0)  # skip atexit handlers and buffers inherited from the parent


def _child(work_request, execroot, peek, private, parent, write_end):
    """The forked child's life; never returns. private: its cache folder and its Staging, which
    the parent made and removes."""
    race_pause.pause("fork")
    os.setpgid(0, 0)  # a group of its own (the parent sets it too): the parent kills the group
    namespaces.die_with_parent(lambda: os.getppid() == parent)  # no orphan writes outputs later
    _keep_only(write_end)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's handler is not ours
    phases.listen(lambda phase: _send_phase(write_end, phase))
    code, text = 1, "exporter worker: the request did not finish\n"
    try:
        cache_dir, outputs = private
        log_dir = None if "log" in peek.roles else isolation.private_log_dir()
        isolation.enter_private_dir(cache_dir)
        gaps = isolation.contain([cache_dir, log_dir, *outputs.folders.values()])
        work = (work_request, execroot, cache_dir, log_dir, outputs, gaps)
        if isolation.PROCESSES not in gaps:
            namespaces.run_in_pid_namespace(lambda: _answer(write_end, *_run_here(*work)), close=(write_end,))
        code, text = _run_here(*work)
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
        self.outputs = staging.Staging(dict(zip(peek.roles, peek.outputs)))
        read_end, write_end = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            _child(work_request, execroot, peek, (self.private, self.outputs), parent, write_end)
        try:  # the child's group, set here too: a stop may come before the child set it itself
            os.setpgid(self.pid, self.pid)
        except OSError:
            pass  # the child set it already (EACCES after its exec, ESRCH once it is gone)
        os.close(write_end)
        self.fd = read_end

    def read(self):
        """Reads what the child wrote; returns False once it closed its end (exited)."""
        chunk = os.read(self.fd, 1 << 16)
        self.data += chunk
        return bool(chunk)

    def stop(self, answer):
        """Kills the child and everything it started; answer is its response's text, or None
        for a request that gets no response. Nothing it wrote is published."""
        self.stopped = answer or ""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:  # no such group (yet): the child itself, by its pid
            try:
                os.kill(self.pid, signal.SIGKILL)
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
        """Reaps the child and publishes its outputs (only its log if it failed); returns its
        WorkResponse, or None if it gets none (see stop)."""
        os.close(self.fd)
        _, status = os.waitpid(self.pid, 0)
        isolation.remove_dir(self.private)
        if self.stopped is not None:
            self.outputs.discard()
            return None if self.stopped == "" else self._response(1, self.stopped)
        phase, answer = _records(self.data)
        code, output = answer or (1, crash.explain(status, phase, self.peek))
        failed_to_publish = self.outputs.publish(code == 0)
        if failed_to_publish and code == 0:
            code, output = 1, f"ERROR: {self.peek.label}: the exporter {failed_to_publish}\n"
        return self._response(code, output)

    def _response(self, code, output):
        return {"exitCode": code, "output": output, "requestId": self.request.get("requestId", 0)}


def _records(data):
    """(the last phase the child entered, its answer (exit code, text) or None) from the bytes
    it wrote into its pipe."""
    phase, at = None, 0
    while data[at:at + 1] in (_PHASE, _ANSWER):
        tag = data[at:at + 1]
        header = _HEADERS[tag]
        start = at + 1 + header.size
        if start > len(data):
            break
        fields = header.unpack_from(data, at + 1)  # (size,) or (exit code, size)
        body = data[start:start + fields[-1]]
        if len(body) < fields[-1]:
            break
        if tag == _ANSWER:
            return phase, (fields[0], body.decode("utf-8", "replace"))
        try:
            phase = json.loads(body)
        except ValueError:
            phase = None  # written by model code, which holds the pipe too: no phase to name
        at = start + fields[-1]
    return phase, None


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
