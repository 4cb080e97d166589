"""A test server on 127.0.0.1: a free port, waiting until it listens, stopping and killing it.

nginx_cache.NginxCache and tests/remote_e2e's BuildboxExecutor both start a server process
on a free port, wait for it to accept connections, and take it down with stop() (SIGTERM,
then SIGKILL after 20 s) or kill() (SIGKILL at once, as a crash would):

    port = local_server.free_port()
    process = subprocess.Popen([...])
    local_server.wait_until_listening(process, port, 20, "nginx", lambda: tail(log_path))
    ...
    local_server.stop(process)
"""

import os
import signal
import socket
import subprocess
import time

# How long stop() and kill() wait for the process to exit.
EXIT_TIMEOUT = 20


def free_port():
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_listening(process, port, timeout, name, log):
    """Returns once 127.0.0.1:port accepts a connection.

    Raises RuntimeError, with log() (the server's log, or its tail) in the message, if the
    process exits first or nothing listens within timeout seconds. name: the server, for
    the message.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited ({process.returncode}): {log()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{name} did not listen on {port}: {log()}")


def read_tail(path, chars):
    """The last chars characters of a log file ("" if there is none yet)."""
    if not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()[-chars:]


def _signal(process, signum, group):
    if group:
        os.killpg(process.pid, signum)
    else:
        process.send_signal(signum)


def kill(process, group=False):
    """SIGKILL to a running process (group: to its process group, which it must lead, e.g.
    started with start_new_session=True), and waits until it exits. None is fine."""
    if process and process.poll() is None:
        _signal(process, signal.SIGKILL, group)
        process.wait(timeout=EXIT_TIMEOUT)


def stop(process, group=False):
    """SIGTERM to a running process (or its process group), then kill() if it has not exited
    within EXIT_TIMEOUT seconds. None is fine."""
    if process and process.poll() is None:
        _signal(process, signal.SIGTERM, group)
        try:
            process.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            kill(process, group)
