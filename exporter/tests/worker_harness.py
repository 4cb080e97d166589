"""The persistent worker, driven as Bazel 4.2.3 drives it, for //exporter/driver's worker tests:
requests over protobuf (its default protocol) or JSON, configs and params files written as the
rules write them, and the worker's forked children."""

import ctypes
import json
import os
import select
import subprocess
import sys
import time

from runfiles import Runfiles

from exporter.driver import work_protocol

MAIN = Runfiles.Create().Rlocation("rules_torch_export/exporter/main.py")

SPEC = {
    "inputs": [{"name": "x", "value": {"tensor": {"shape": ["batch", 4], "dtype": "float32"}}}],
    "dims": {"batch": {"min": 1, "max": 8, "example": 2}},
}


def params_for(name, entry, deadline=None, spec=SPEC, outputs=""):
    """Writes a config and params file for exporting `entry` (its outputs in the folder outputs,
    else beside them); returns the params argument."""
    return action_params(name, "export", {
        "model": {"label": "//zoo:model", "entry": entry, "init_args": {},
                  "srcs": ["zoo/models.py"], "import_roots": ["."]},
        "spec_label": "//zoo:spec",
        "spec": spec,
        "outputs": {"pt2": os.path.join(outputs, f"{name}.pt2"), "manifest": os.path.join(outputs, f"{name}.pt2.json")},
    }, deadline)


def action_params(name, command, config, deadline=None):
    """Writes the config of the action `command` for the target //zoo:<name> and its params file,
    as the rules write them; returns the params argument."""
    with open(f"{name}.json", "w") as f:
        json.dump({"label": f"//zoo:{name}", "identity": "identity.txt", **config}, f)
    with open(f"{name}.params", "w") as f:
        f.write(f"{command}\n{name}.json\n" + (f"--deadline={deadline}\n" if deadline else ""))
    return f"@{name}.params"


_RESPONSE_FIELDS = {1: "exitCode", 2: "output", 3: "requestId", 4: "wasCancelled"}


def _decode_response(body):
    """One WorkResponse's protobuf bytes as a dict; a message that is not one raises
    work_protocol.Malformed (one line)."""
    response = {"exitCode": 0, "output": "", "requestId": 0}
    for field, wire, value in work_protocol._fields(body):
        name = _RESPONSE_FIELDS.get(field)
        if name == "output" and wire == 2:
            response[name] = value.decode("utf-8")
        elif name == "wasCancelled" and wire == 0:
            response[name] = bool(value)
        elif name and wire == 0:
            response[name] = work_protocol._signed32(value)
        else:
            raise work_protocol.Malformed(f"a WorkResponse has field {field} of wire type {wire}")
    return response


def decode_responses(data, protocol):
    """(the WorkResponse dicts in data, the bytes after the last complete one): what Bazel reads."""
    if protocol == work_protocol.JSON:
        lines = data.split(b"\n")
        return [json.loads(line) for line in lines[:-1] if line.strip()], lines[-1]
    found, pos = [], 0
    while True:
        header = work_protocol._varint(data, pos)
        if header is None or header[1] + header[0] > len(data):
            return found, data[pos:]
        size, start = header
        found.append(_decode_response(data[start:start + size]))
        pos = start + size


def every_file():
    """Every file under the current folder (the tests' execroot), relative to it."""
    return sorted(os.path.relpath(os.path.join(folder, name)) for folder, _, names in os.walk(".") for name in names)


class Worker:
    """A worker process, spoken to as Bazel 4.2.3 does: protobuf messages, or JSON objects
    without trailing newlines. warm is the command whose warm-up it runs (--warm)."""

    def __init__(self, main=MAIN, protocol=work_protocol.PROTO, log=None, warm="lower", env=None):
        self.proc = subprocess.Popen(
            [sys.executable, main, f"--warm={warm}", "--persistent_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log or subprocess.DEVNULL,
            env={**os.environ, "PYTHONHASHSEED": "0", **(env or {})},
        )
        assert self.proc.stdin and self.proc.stdout  # both piped
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.next_id = 0
        self.protocol = protocol
        self.received = b""  # bytes of a response not yet complete
        self.responses = []  # complete responses not yet received

    def send(self, params, inputs=None):
        """Sends a request; inputs are its declared inputs (WorkRequest.inputs), by default every
        file in the current folder (the worker refuses a request without inputs, as Bazel
        always lists them)."""
        self.next_id += 1
        inputs = every_file() if inputs is None else inputs
        request = {"arguments": [params], "inputs": [{"path": p} for p in inputs], "requestId": self.next_id}
        if self.protocol == work_protocol.JSON:
            self.stdin.write(json.dumps(request).encode())  # no newline
        else:
            self.stdin.write(work_protocol.encode_request(request))
        self.stdin.flush()
        return self.next_id

    def receive(self, timeout=240):
        deadline = time.monotonic() + timeout
        while not self.responses:
            ready, _, _ = select.select([self.stdout], [], [], max(0, deadline - time.monotonic()))
            assert ready, f"no WorkResponse within {timeout} s: is the worker's child hung?"
            chunk = os.read(self.stdout.fileno(), 1 << 16)
            assert chunk, "the worker closed its output"
            responses, self.received = decode_responses(self.received + chunk, self.protocol)
            self.responses += responses
        return self.responses.pop(0)

    def request(self, params, inputs=None):
        request_id = self.send(params, inputs)
        response = self.receive()
        assert response["requestId"] == request_id
        return response

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

    def close(self):
        self.stdin.close()
        self.proc.wait(timeout=60)


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _children(pid):
    """pid's child processes, as Linux lists them for each of its threads."""
    found = []
    try:
        for thread in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{thread}/children") as f:
                found += f.read().split()
    except FileNotFoundError:  # pid (or the thread) ended meanwhile
        pass
    return found


def children_of(pid):
    """The worker's forked children: processes whose parent it is and whose command line is its
    own (a fork, not a helper program that a library runs for a moment)."""
    return [child for child in _children(pid) if _cmdline(child) == _cmdline(pid)]


def descendants(pid=None):
    """Every process below pid (by default this one), by command line: only the test's own."""
    found, queue = {}, _children(pid or os.getpid())
    while queue:
        child = queue.pop()
        command = _cmdline(child)
        if command is not None:
            found[int(child)] = command
            queue += _children(child)
    return found


_PR_SET_CHILD_SUBREAPER = 36


def adopt_orphans():
    """Makes this process the parent of every orphan below it (instead of init), so that a
    process which outlives what started it still shows in descendants()."""
    assert ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1) == 0, "prctl failed"


def wait_until(condition, seconds, failure):
    """Polls condition() until it holds; fails with failure after seconds."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, failure
        time.sleep(0.05)


def is_running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def one_shot(params):
    return subprocess.run([sys.executable, MAIN, params], capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"}, timeout=600)
