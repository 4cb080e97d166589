"""`bazel run //models/gru:gru_pte.explore`: Model Explorer serves the GRU's program on 127.0.0.1
(and nowhere else), its page loads, its .pte adapter draws every method with the operators and
delegates the program's manifest counts, and Ctrl-C stops it. Manual: it fetches @model_explorer."""

import collections
import json
import os
import signal
import socket
import subprocess
import urllib.parse
import urllib.request

PROGRAM = "models/gru/gru_pte"
LAUNCHER = PROGRAM + ".explore"
LABEL = "//models/gru:gru_pte.explore"
# A direct opener: a proxy in the environment must not carry 127.0.0.1's requests.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
IO_NODES = {"Graph Inputs", "Graph Outputs"}


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
    server = subprocess.Popen([LAUNCHER, f"--port={port}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        pte = _served_program(server, port)
        assert os.path.samefile(pte, PROGRAM + ".pte")
        assert _listening_addresses(port) == ["0100007F"]  # 127.0.0.1 only
        assert _get(port, "/check_health") == "model_explorer_ok"
        assert "<title>Model Explorer</title>" in _get(port, "/")
        _check_graphs(port, pte)
        server.send_signal(signal.SIGINT)
        out = server.communicate(timeout=60)[0]
    finally:
        server.kill()
    assert server.returncode == 0, out[-2000:]
    assert "Stopping server..." in out


def test_a_taken_port_fails_in_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([LAUNCHER, f"--port={port}"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr == (f"rules_torch_export: {LABEL}: port {port} on 127.0.0.1 is not free "
                             "(Address already in use); pass another with -- --port=N, or none\n")
