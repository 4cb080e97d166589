"""A program's methods run by ExecuTorch's Python runtime in another venv's interpreter.

ExecuTorch 1.3.1 lowers on the toolchain's torch, but its Python runtime (the binding
_portable_lib) was compiled against torch 2.12's C++ ABI and does not import beside torch 2.13. So
the NumericsValues action of a test in 1.3's runtimes keeps computing the inputs and the eager
reference in its own process, and hands only the program's calls to a child: this file, started
as a script by the interpreter of the release's runtime venv (toolchain/runtime_venv_repository.bzl).
The child imports only its own venv's torch and ExecuTorch. They speak one JSON line per request
and reply; tensors and scalars travel as torch.save files in a private folder (weights_only loads:
plain tensors, numbers and lists, which torch 2.12 and 2.13 read alike).
"""

import json
import os
import subprocess
import sys
import tempfile


class ChildRuntime:
    """The child process of one program: load() once, then call() per call, in order (a stateful
    program keeps its state between calls, as in the toolchain's runtime); close() ends it."""

    def __init__(self, python):
        self.folder = tempfile.mkdtemp(prefix="runtime_process_")
        self.log = open(os.path.join(self.folder, "stderr.txt"), "w+", encoding="utf-8")
        self.process = subprocess.Popen([python, "-I", os.path.abspath(__file__)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.log, text=True)
        assert self.process.stdin and self.process.stdout  # both are pipes
        self.requests, self.replies = self.process.stdin, self.process.stdout
        self.calls = 0
        self.version = None  # the child's ExecuTorch version, once a program is loaded

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
        self.version = reply["version"]
        return reply["inputs"]

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


def _load(request):
    """{name: (execute, number of inputs)}: a .ptd loads through the binding's module, as in
    actions/numerics_values.py for runtimes whose Runtime.load_program has no data_path."""
    import functools

    from executorch.extension.pybindings import portable_lib
    from executorch.runtime import Runtime

    if request["ptd"]:
        module = portable_lib._load_for_executorch(request["load"], data_path=request["ptd"])
        return {name: (functools.partial(module.run_method, name), module.method_meta(name).num_inputs())
                for name in request["methods"]}
    program = Runtime.get().load_program(request["load"])
    methods = {name: program.load_method(name) for name in request["methods"]}
    return {name: (method.execute, method.metadata.num_inputs()) for name, method in methods.items()}


def _serve(requests, reply):
    """Answers each request line: a load, then calls. An error of the runtime is the reply's."""
    import importlib.metadata

    import torch

    methods = {}
    for line in requests:
        request = json.loads(line)
        answer: dict[str, object]
        try:
            if "load" in request:
                methods = _load(request)
                answer = {"inputs": {name: inputs for name, (_, inputs) in methods.items()},
                          "version": importlib.metadata.version("executorch")}
            else:
                outputs = list(methods[request["call"]][0](torch.load(request["inputs"], weights_only=True)))
                torch.save(outputs, request["inputs"] + ".out")
                answer = {"outputs": request["inputs"] + ".out"}
        except Exception as e:  # the runtime raises RuntimeError with its error code
            answer = {"error": (str(e).splitlines() or [type(e).__name__])[0]}
        reply.write(json.dumps(answer) + "\n")
        reply.flush()


if __name__ == "__main__":
    # The replies get a stream of their own: whatever the runtime prints goes to stderr.
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    _serve(sys.stdin, replies)
