"""`bazel run //models/gru:gru_pte.explore`: Model Explorer serves the GRU's program on 127.0.0.1
(and nowhere else), its page loads, its .pte adapter draws every method with the operators and
delegates the program's manifest counts, nothing asks the internet (the launcher turns off the
pinned viewer's private version check, which does), and Ctrl-C stops it."""

import collections
import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import urllib.parse
import urllib.request

from runfiles import Runfiles

PROGRAM = "models/gru/gru_pte"
LAUNCHER = PROGRAM + ".explore"
LABEL = "//models/gru:gru_pte.explore"
# A direct opener: a proxy in the environment must not carry 127.0.0.1's requests.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
IO_NODES = {"Graph Inputs", "Graph Outputs"}
# The interpreter of @model_explorer's venv: the pinned viewer, as the launcher runs it.
VIEWER_PYTHON = Runfiles.Create().Rlocation("model_explorer/python.sh")
EXPLORE_PY = "tools/explorer/explore.py"
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
# What the launcher's version check answers: no newer release, nothing asked.
NO_NEWS = {"version": "", "runningVersion": "", "releaseUrl": "", "desktopAppUrl": ""}


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get(port, path):
    with OPENER.open(f"http://127.0.0.1:{port}{path}", timeout=120) as response:
        assert response.status == 200, path
        return response.read().decode("utf-8")


def _served_program(server, port):
    """The .pte that the URL it prints opens (with the .pte adapter), once the server is up."""
    start, seen = f"http://127.0.0.1:{port}/?data=", []
    for line in server.stdout:
        seen.append(line)
        if line.startswith(start):
            (model,) = json.loads(urllib.parse.unquote(line.strip()[len(start):]))["models"]
            assert model["adapterId"] == "pte_adapter_model_explorer"
            return model["url"]
    raise AssertionError("it stopped before serving: " + "".join(seen)[-2000:])


@contextlib.contextmanager
def _proxy_trap():
    """A proxy on 127.0.0.1 that keeps the first bytes of every connection made through it (the
    request line: `CONNECT pypi.python.org:443 ...`) and closes it at once, so that the request
    fails fast. Yields an environment that sends every HTTP(S) request there, and what it kept."""
    listener = socket.create_server(("127.0.0.1", 0))
    kept = []

    def serve():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:  # closed at the end
                return
            with connection:
                kept.append(connection.recv(256) or b"(no bytes)")

    threading.Thread(target=serve, daemon=True).start()
    url = "http://127.0.0.1:%d" % listener.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k.lower() not in PROXY_VARIABLES}
    env.update({name: url for name in PROXY_VARIABLES[:3] for name in (name, name.upper())})
    try:
        yield env, kept
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()


def _listening_addresses(port):
    """Every local address some socket listens on at `port` (IPv4 and IPv6), as /proc writes it."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                local, state = row.split()[1], row.split()[3]
                address, hex_port = local.split(":")
                if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    found.append(address)
    return found


def _expected_nodes(method):
    """A method's nodes by label, from the manifest: operators (without overload) and delegates."""
    expected = collections.Counter()
    for operator, count in method["operators"].items():
        expected[operator.split(".")[0]] += count
    for backend, delegates in method["delegates"].items():
        expected[backend] += delegates["count"]
    return expected


def _graphs(port, pte):
    command = {"extensionId": "pte_adapter_model_explorer", "cmdId": "convert", "modelPath": pte,
               "settings": {}, "deleteAfterConversion": False}
    answer = json.loads(_get(port, "/api/v1/send_command?json=" + urllib.parse.quote(json.dumps(command))))
    assert "error" not in answer, answer
    return {collection["label"]: {graph["id"]: graph for graph in collection["graphs"]}
            for collection in answer["graphCollections"]}


def _check_graphs(port, pte):
    manifest = json.load(open(PROGRAM + ".pte.json"))
    collections_ = _graphs(port, pte)
    program = collections_[os.path.basename(pte)]
    assert sorted(program) == sorted(manifest["methods"])
    for name, method in manifest["methods"].items():
        if method["operators"] or method["delegates"]:
            drawn = collections.Counter(n["label"] for n in program[name]["nodes"] if n["label"] not in IO_NODES)
            assert drawn == _expected_nodes(method), name
    delegates = manifest["methods"]["forward"]["delegates"]["XnnpackBackend"]["count"]
    assert len(collections_["delegates"]) == delegates  # each XNNPACK partition, drawn inside


def test_the_explorer_serves_the_program_on_localhost_and_stops_on_ctrl_c():
    port = _free_port()
    with _proxy_trap() as (env, asked):
        server = subprocess.Popen([LAUNCHER, f"--port={port}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, env=env)
        try:
            pte = _served_program(server, port)
            assert os.path.samefile(pte, PROGRAM + ".pte")
            assert _listening_addresses(port) == ["0100007F"]  # 127.0.0.1 only
            assert _get(port, "/check_health") == "model_explorer_ok"
            assert "<title>Model Explorer</title>" in _get(port, "/")
            _check_graphs(port, pte)
            # The page's own version check: the viewer's would ask PyPI (through the trap) first.
            assert json.loads(_get(port, "/api/v1/check_new_version")) == NO_NEWS
            server.send_signal(signal.SIGINT)
            out = server.communicate(timeout=60)[0]
        finally:
            server.kill()
    assert server.returncode == 0, out[-2000:]
    assert "Stopping server..." in out
    assert asked == [], f"the explorer asked the internet: {asked}"


def test_the_pinned_viewer_s_version_check_asks_the_internet():
    """What the launcher turns off is there, by its name, and is what would ask: if the viewer
    renames or drops it, this fails (and the launcher refuses to start, see below)."""
    check = "from model_explorer import server; print(server._check_new_version(False))"
    with _proxy_trap() as (env, asked):
        result = subprocess.run([VIEWER_PYTHON, "-c", check], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert [line.split(b" ")[:2] for line in asked] == [[b"CONNECT", b"pypi.python.org:443"]], asked


def test_a_viewer_without_the_version_check_fails_in_one_line(tmp_path):
    """The launcher checks for the function before it replaces it: setting a name that the viewer
    no longer reads would leave its version check on, asking the internet at every start."""
    (tmp_path / "model_explorer").mkdir()
    (tmp_path / "model_explorer" / "__init__.py").write_text("")
    (tmp_path / "model_explorer" / "server.py").write_text("def _check_for_updates(print_msg=True):\n    pass\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}  # ahead of the venv's own Model Explorer
    result = subprocess.run([VIEWER_PYTHON, EXPLORE_PY, LABEL, PROGRAM + ".pte"], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 2
    assert result.stderr == (f"rules_torch_export: {LABEL}: this Model Explorer has no server._check_new_version, "
                             "which the launcher turns off to stay offline; update tools/explorer/explore.py for "
                             "the viewer in requirements.lock\n")


def test_a_taken_port_fails_in_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([LAUNCHER, f"--port={port}"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr == (f"rules_torch_export: {LABEL}: port {port} on 127.0.0.1 is not free "
                             "(Address already in use); pass another with -- --port=N, or none\n")
