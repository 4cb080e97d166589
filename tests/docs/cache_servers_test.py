"""Every cache server the docs show or the tests start listens on 127.0.0.1 or requires
authentication (docs/caching.md, "Who may write a shared cache"); and the documented
authenticated nginx server, started on this machine, lets readers read and only writers write."""

import base64
import os
import re
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest
from runfiles import Runfiles

from tests.e2e import local_server, nginx_cache

RUNFILES = Runfiles.Create()


def _nginx_blocks():
    with open(RUNFILES.Rlocation("rules_torch_export/docs/caching.md"), encoding="utf-8") as f:
        text = f.read()
    return [block for block in re.findall(r"```nginx\n(.*?)```", text, re.S)]


def _servers(config):
    """The text of each `server { ... }` block of an nginx config."""
    found = []
    for match in re.finditer(r"\bserver\s*\{", config):
        depth, at = 1, match.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(config[at], 0)
            at += 1
        found.append(config[match.start():at])
    return found


def _is_private_or_authenticated(server):
    listens = re.findall(r"^\s*listen\s+([^;]+);", server, re.M)
    loopback = listens and all(re.match(r"(127\.0\.0\.1|\[::1\]|localhost)(:|\s|$)", l) for l in listens)
    authenticated = (re.search(r"^\s*auth_basic\s+(?!off)", server, re.M)
                     and all(" ssl" in f" {l}" for l in listens))
    return bool(loopback or authenticated), listens


SERVERS = [(f"docs/caching.md block {i}", s) for i, b in enumerate(_nginx_blocks()) for s in _servers(b)]
SERVERS += [("tests/e2e/nginx_cache.py", s) for s in _servers(nginx_cache._CONFIG.replace("{{", "{").replace("}}", "}"))]


def test_there_are_servers_to_check():
    assert len([w for w, _ in SERVERS if w.startswith("docs")]) >= 2 and any(w.endswith(".py") for w, _ in SERVERS)


@pytest.mark.parametrize("where,server", SERVERS, ids=[w for w, _ in SERVERS])
def test_every_server_listens_on_127_0_0_1_or_requires_authentication(where, server):
    ok, listens = _is_private_or_authenticated(server)
    assert ok, f"{where}: listens on {listens} without authentication over TLS:\n{server}"


def _authenticated_server():
    (server,) = [s for where, s in SERVERS if where.startswith("docs") and "auth_basic" in s]
    return server


def _credentials(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _request(url, method="GET", data=None, auth=None):
    import ssl

    request = urllib.request.Request(url, data=data, method=method, headers={"Authorization": auth} if auth else {})
    try:
        with urllib.request.urlopen(request, timeout=10, context=ssl._create_unverified_context()) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def test_the_documented_server_lets_readers_read_and_only_writers_write():
    """The docs' authenticated server, with its paths moved into a scratch folder and its port
    moved to a free one of 127.0.0.1, and a self-signed certificate."""
    with tempfile.TemporaryDirectory() as tmp:
        port = local_server.free_port()
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=cache",
                        "-keyout", f"{tmp}/bazel-cache.key", "-out", f"{tmp}/bazel-cache.crt"],
                       check=True, capture_output=True)
        for kind, user in (("readers", "dev"), ("writers", "ci")):
            hashed = subprocess.run(["openssl", "passwd", "-apr1", f"{user}-secret"], check=True,
                                    capture_output=True, text=True).stdout.strip()
            with open(f"{tmp}/bazel-cache-{kind}.htpasswd", "w") as f:
                f.write(f"{user}:{hashed}\n")
        os.makedirs(f"{tmp}/cache")
        server = (_authenticated_server().replace("/etc/nginx", tmp).replace("/var/cache/bazel", f"{tmp}/cache")
                  .replace("listen 443 ssl", f"listen 127.0.0.1:{port} ssl"))
        user = "user root;" if os.geteuid() == 0 else ""
        with open(f"{tmp}/nginx.conf", "w") as f:
            f.write(f"daemon off; master_process off; {user} pid {tmp}/nginx.pid; error_log {tmp}/error.log;\n"
                    f"events {{ worker_connections 16; }}\n"
                    f"http {{ access_log off; client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy; "
                    f"fastcgi_temp_path {tmp}/fastcgi; uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;\n"
                    f"{server} }}\n")
        process = subprocess.Popen([nginx_cache.nginx_binary(), "-p", tmp, "-c", f"{tmp}/nginx.conf", "-e",
                                    f"{tmp}/error.log"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            local_server.wait_until_listening(process, port, 20, "nginx", lambda: open(f"{tmp}/error.log").read())
            url = f"https://127.0.0.1:{port}/cas/0123"
            reader, writer = _credentials("dev", "dev-secret"), _credentials("ci", "ci-secret")
            assert _request(url, "PUT", b"evil", auth=None) == 401
            assert _request(url, "PUT", b"evil", auth=reader) == 401
            assert _request(url, "PUT", b"built", auth=writer) in (201, 204)
            assert _request(url, auth=None) == 401
            assert _request(url, auth=reader) == 200
            with open(f"{tmp}/cache/cas/0123", "rb") as f:
                assert f.read() == b"built"
        finally:
            local_server.stop(process)
