"""A real Bazel HTTP remote cache for tests: nginx with WebDAV PUT on 127.0.0.1, free port.

    with nginx_cache.NginxCache(tmp_dir) as cache:
        ws.build("//zoo:all", "--remote_cache=" + cache.url)
        cache.blobs("cas")   # paths of the stored content-addressed blobs

Bazel's HTTP cache protocol is plain GET/PUT of /ac/<sha256> and /cas/<sha256>, which nginx
serves from `root` once PUT is allowed. nginx runs in the foreground as one process, so
stop() and kill() really take the server down.
"""

import os
import shutil
import subprocess
import urllib.request

from tests.e2e import local_server

# Tests take a port nothing serves from here too (a dead cache).
free_port = local_server.free_port

_CONFIG = """\
daemon off;
master_process off;
{user}
error_log {prefix}/error.log warn;
pid {prefix}/nginx.pid;
events {{ worker_connections 64; }}
http {{
    access_log {prefix}/access.log;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            root {root};
            dav_methods PUT;
            create_full_put_path on;
            client_max_body_size 0;
        }}
    }}
}}
"""


def nginx_binary():
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/bin"])
    found = shutil.which("nginx", path=path)
    if not found:
        raise RuntimeError("nginx_cache: nginx is missing; run ./bazelw once, it installs nginx")
    return found


class NginxCache:
    """An nginx WebDAV server whose document root is a fresh cache folder."""

    def __init__(self, base_dir):
        self.prefix = os.path.join(base_dir, "nginx")
        self.root = os.path.join(self.prefix, "cache")
        os.makedirs(self.root, exist_ok=True)
        self.port = None
        self.process = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        """Starts nginx (on a new free port the first time, the same port later)."""
        self.port = self.port or free_port()
        # Started as root, nginx drops to nobody unless told otherwise, and then every PUT
        # into a root-owned folder fails with 500 (Bazel would build on without the cache).
        user = "user root;" if os.geteuid() == 0 else ""
        config = os.path.join(self.prefix, "nginx.conf")
        with open(config, "w", encoding="utf-8") as f:
            f.write(_CONFIG.format(user=user, prefix=self.prefix, port=self.port, root=self.root))
        with open(os.path.join(self.prefix, "stderr.log"), "ab") as stderr:
            self.process = subprocess.Popen(
                # -e: the startup error log too, which defaults to /var/log/nginx (root only).
                [nginx_binary(), "-p", self.prefix, "-c", config,
                 "-e", os.path.join(self.prefix, "error.log")],
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        local_server.wait_until_listening(self.process, self.port, 20, "nginx", self.error_log)
        return self

    def kill(self):
        """Takes the server down at once (SIGKILL), as a crash would."""
        local_server.kill(self.process)

    def stop(self):
        local_server.stop(self.process)

    def error_log(self):
        return local_server.read_tail(os.path.join(self.prefix, "error.log"), 2000)

    def blobs(self, kind):
        """Paths of the stored entries of one kind: "cas" (contents) or "ac" (action results)."""
        folder = os.path.join(self.root, kind)
        if not os.path.isdir(folder):
            return []
        return sorted(os.path.join(folder, n) for n in os.listdir(folder))

    def put(self, kind, key, data):
        """Stores an entry over HTTP, as a client would."""
        request = urllib.request.Request(f"{self.url}/{kind}/{key}", data=data, method="PUT")
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status

    def clear(self):
        for kind in ("ac", "cas"):
            shutil.rmtree(os.path.join(self.root, kind), ignore_errors=True)
