"""A program's methods run by ExecuTorch's Python runtime in another venv's interpreter.

ExecuTorch 1.3.1 lowers on the toolchain's torch, but its Python runtime (the binding
_portable_lib) was compiled against torch 2.12's C++ ABI and does not import beside torch 2.13. So
the NumericsValues action of a test in 1.3's runtimes keeps computing the inputs and the eager
reference in its own process, and hands only the program's calls to a child: this file, started
as a script by the interpreter of the release's runtime venv (toolchain/runtime_venv_repository.bzl).
The child imports only its own venv's torch and ExecuTorch. They speak one JSON line per request
and reply; tensors and scalars travel as torch.save files in a private folder (weights_only loads:
plain tensors, numbers and lists, which torch 2.12 and 2.13 read alike). executorch_benchmark in
such a release asks the child to time a method (time()): the child makes the synthetic inputs and
runs the timing loop itself, so no call's figure counts a round trip through those files.
"""

import json
import os
import subprocess
import sys
import tempfile
import time


class ChildRuntime:
    """The child process of one program: load() once, then call() per call, in order (a stateful
    program keeps its state between calls, as in the toolchain's runtime), or time(); close() (or
    the end of a `with` block) ends it."""

    def __init__(self, python):
        self.folder = tempfile.mkdtemp(prefix="runtime_process_")
        self.log = open(os.path.join(self.folder, "stderr.txt"), "w+", encoding="utf-8")
        self.process = subprocess.Popen([python, "-I", os.path.abspath(__file__)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.log, text=True)
        assert self.process.stdin and self.process.stdout  # both are pipes
        self.requests, self.replies = self.process.stdin, self.process.stdout
        self.calls = 0
        self.version = None  # the child's ExecuTorch version, once a program is loaded
        self.load_ms = None  # how long the child took to load the program and its methods

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()

    def _ask(self, request):
        self.requests.write(json.dumps(request) + "\n")
        self.requests.flush()
        line = self.replies.readline()
        if not line:
            self.log.seek(0)
            tail = " | ".join(self.log.read().strip().splitlines()[-3:])
            raise RuntimeError(f"the runtime's process exited (code {self.process.wait()}): {tail}")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply

    def load(self, pte, ptd, names):
        """{name: number of inputs} of the methods `names`, loaded from one program."""
        reply = self._ask({"load": os.path.abspath(pte), "ptd": ptd and os.path.abspath(ptd), "methods": list(names)})
        self.version, self.load_ms = reply["version"], reply["load_ms"]
        return reply["inputs"]

    def time(self, name, warmup, iterations, dtype_names):
        """timed_calls' figures of the method `name` on synthetic_inputs, measured in the child;
        dtype_names: {ScalarType number: torch's name} (core/dtypes.py, which the child cannot import)."""
        return self._ask({"time": name, "warmup": warmup, "iterations": iterations, "dtypes": dtype_names})

    def call(self, name, feed):
        """The outputs of the method `name` on the inputs `feed` (a list of tensors and scalars)."""
        import torch

        self.calls += 1
        path = os.path.join(self.folder, f"call{self.calls}.pt")
        torch.save(list(feed), path)
        reply = self._ask({"call": name, "inputs": path})
        return torch.load(reply["outputs"], weights_only=True)

    def close(self):
        if self.process.poll() is None:
            self.requests.close()
            self.process.wait()
        self.log.close()
        for name in os.listdir(self.folder):
            os.remove(os.path.join(self.folder, name))
        os.rmdir(self.folder)


def synthetic_inputs(method_meta, dtype_names):
    """The native runner's inputs (et_runner.cc, synthetic_inputs) for ExecuTorch's Python
    runtime: each tensor at its largest shape, floats the pattern (k % 17) / 8 - 1, others 0.
    dtype_names: {ScalarType number: torch's name}."""
    import torch

    inputs = []
    for i in range(method_meta.num_inputs()):
        try:
            meta = method_meta.input_tensor_meta(i)
        except Exception:  # a non-tensor input (an int): the runner passes 0
            inputs.append(0)
            continue
        dtype = getattr(torch, dtype_names[meta.dtype()])
        sizes = list(meta.sizes())
        if dtype == torch.float32:
            count = 1
            for size in sizes:
                count *= size
            inputs.append(((torch.arange(count) % 17).float() / 8 - 1).reshape(sizes))
        else:
            inputs.append(torch.zeros(sizes, dtype=dtype))
    return inputs


def _percentile(values, p):  # as the native runner computes it
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * (len(ordered) - 1) + 0.5))]


def timed_calls(execute, inputs, warmup, iterations):
    """First call and p50/p90/min in ms of execute(inputs): one first call, `warmup` untimed
    ones, then `iterations` timed ones."""
    times = []
    for _ in range(1 + warmup + iterations):
        start = time.perf_counter()
        execute(inputs)
        times.append((time.perf_counter() - start) * 1000)
    timed = times[1 + warmup:]
    return {"first_call_ms": times[0], "p50_ms": _percentile(timed, 0.5), "p90_ms": _percentile(timed, 0.9),
            "min_ms": min(timed), "calls": len(timed)}


def _load(request):
    """({name: (execute, method meta)}, ms the load took, imports excluded): a .ptd loads through
    the binding's module, as in actions/numerics_values.py for runtimes whose
    Runtime.load_program has no data_path."""
    import functools

    from executorch.extension.pybindings import portable_lib
    from executorch.runtime import Runtime

    start = time.perf_counter()
    if request["ptd"]:
        module = portable_lib._load_for_executorch(request["load"], data_path=request["ptd"])
        loaded = {name: (functools.partial(module.run_method, name), module.method_meta(name))
                  for name in request["methods"]}
    else:
        program = Runtime.get().load_program(request["load"])
        methods = {name: program.load_method(name) for name in request["methods"]}
        loaded = {name: (method.execute, method.metadata) for name, method in methods.items()}
    return loaded, (time.perf_counter() - start) * 1000


def _answer(request, methods):
    """The reply to one request: a load (which replaces `methods`), a call, or a timing."""
    import importlib.metadata

    import torch

    if "load" in request:
        loaded, load_ms = _load(request)
        methods.clear()
        methods.update(loaded)
        return {"inputs": {name: meta.num_inputs() for name, (_, meta) in loaded.items()},
                "version": importlib.metadata.version("executorch"), "load_ms": load_ms}
    execute, meta = methods[request.get("call") or request["time"]]
    if "time" in request:
        inputs = synthetic_inputs(meta, {int(code): name for code, name in request["dtypes"].items()})
        return timed_calls(execute, inputs, request["warmup"], request["iterations"])
    outputs = list(execute(torch.load(request["inputs"], weights_only=True)))
    torch.save(outputs, request["inputs"] + ".out")
    return {"outputs": request["inputs"] + ".out"}


def _serve(requests, reply):
    """Answers each request line: a load, then calls. An error of the runtime is the reply's."""
    methods = {}
    for line in requests:
        answer: dict[str, object]
        try:
            answer = _answer(json.loads(line), methods)
        except Exception as e:  # the runtime raises RuntimeError with its error code
            answer = {"error": (str(e).splitlines() or [type(e).__name__])[0]}
        reply.write(json.dumps(answer) + "\n")
        reply.flush()


if __name__ == "__main__":
    # The replies get a stream of their own: whatever the runtime prints goes to stderr.
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    _serve(sys.stdin, replies)
