"""A model that tries to reach the network while it is built, and a local listener to catch it.

End-to-end tests install it as //zoo_net (fetch_ep) and check that no build lets it through:
the local sandbox (tests/e2e/hermeticity_test.py) and a remote executor
(tests/remote_e2e/remote_execution_test.py).
"""

import contextlib
import socket

BUILD = """
load("//rules:defs.bzl", "dim", "shape_spec", "tensor", "torch_export", "torch_model")

torch_model(name = "fetch", srcs = ["__init__.py", "fetch.py"], entry = "zoo_net.fetch:Fetch")

shape_spec(name = "vec", inputs = {"x": tensor(["batch", 8])}, dims = {"batch": dim(max = 4)})

torch_export(name = "fetch_ep", model = ":fetch", shapes = ":vec")
"""

_MODEL = '''"""A model that fetches its weights over the network while it is built."""

import socket

import torch


class Fetch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        with socket.create_connection(("127.0.0.1", {port}), timeout=10) as conn:
            conn.sendall(b"GET /weights\\n")
        self.layer = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.layer(x)
'''


def install(ws, port, extra_build=""):
    """Writes //zoo_net into the workspace; its model dials 127.0.0.1:port."""
    ws.write("zoo_net/BUILD", BUILD + extra_build)
    ws.write("zoo_net/__init__.py", "")
    ws.write("zoo_net/fetch.py", _MODEL.format(port=port))


@contextlib.contextmanager
def listener():
    """A listening socket on a free port of 127.0.0.1 (non-blocking): see connected()."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.setblocking(False)
        yield server


def connected(server):
    """Whether anything connected to the listener since the last call."""
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True
