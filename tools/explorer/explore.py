"""Serves one ExecuTorch program in Google's Model Explorer on 127.0.0.1, until Ctrl-C.

Run by `bazel run <program>.explore` on the interpreter of @model_explorer's venv:
  explore.py LABEL PTE [--port=N]
Without --port it takes a free port. It prints the URL and opens no browser.
"""

import io
import os
import signal
import socket
import sys

ADAPTER = "pte_adapter_model_explorer"
HOST = "127.0.0.1"
# A .pte is an ExecuTorch flatbuffer: its file identifier sits at bytes 4 to 8.
PTE_IDENTIFIER = b"ET12"
# The viewer's private function that asks the internet for a newer release (server.py).
VERSION_CHECK = "_check_new_version"


class UsageError(Exception):
    """A bad argument or program: one line for the user."""


def _port(args):
    """The port that --port=N asks for, or 0 (pick one) without it."""
    if not args:
        return 0
    if len(args) == 2 and args[0] == "--port":
        args = ["--port=" + args[1]]
    if len(args) != 1 or not args[0].startswith("--port="):
        raise UsageError(f"takes only --port=N (a free port from 1 to 65535), not {' '.join(args)!r}")
    text = args[0][len("--port="):]
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise UsageError(f"--port={text} is not a port; give a number from 1 to 65535, or no --port for a free one")
    return int(text)


def _free_port(port):
    """port if it is free on 127.0.0.1 (a free one for 0); fails in one line if it is taken."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError as err:
            raise UsageError(f"port {port} on {HOST} is not free ({err.strerror}); "
                             "pass another with -- --port=N, or none") from None
        return probe.getsockname()[1]


def _checked_program(path):
    """The program's absolute path, once it looks like a .pte."""
    try:
        with open(path, "rb") as program:
            head = program.read(8)
    except OSError as err:
        raise UsageError(f"cannot read its program {path} ({err.strerror}); "
                         "run the program's .explore target with bazel run") from None
    if not path.endswith(".pte") or head[4:8] != PTE_IDENTIFIER:
        raise UsageError(f"{path} is not an ExecuTorch .pte (no {PTE_IDENTIFIER.decode()} identifier); rebuild the program")
    return os.path.abspath(path)


def _turn_off_version_check():
    """The viewer would ask PyPI and GitHub for a newer release at every start (and the page asks
    again): a pinned viewer stays offline. Fails rather than set a name the viewer no longer reads."""
    from model_explorer import server

    if not callable(getattr(server, VERSION_CHECK, None)):
        raise UsageError(f"this Model Explorer has no server.{VERSION_CHECK}, which the launcher turns off to "
                         "stay offline; update tools/explorer/explore.py for the viewer in requirements.lock")
    no_news = {"version": "", "runningVersion": "", "releaseUrl": "", "desktopAppUrl": ""}
    setattr(server, VERSION_CHECK, lambda print_msg=True: dict(no_news))


def _serve(program, port):
    """Model Explorer's server on HOST:port with the .pte adapter; returns on Ctrl-C."""
    # The server asks 127.0.0.1 whether it is up through `requests`, which would take a proxy.
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = ",".join(filter(None, [HOST, os.environ.get("NO_PROXY")]))
    import model_explorer

    config = model_explorer.config().add_model_from_path(program, adapterId=ADAPTER)
    model_explorer.visualize_from_config(config, host=HOST, port=port, extensions=[ADAPTER], no_open_in_browser=True)


def main(argv):
    label = argv[1] if len(argv) > 1 else "<program>.explore"
    try:
        if len(argv) < 3:
            raise UsageError("usage: explore.py LABEL PTE [--port=N]; run it with bazel run <program>.explore")
        program = _checked_program(argv[2])
        port = _free_port(_port(argv[3:]))
        _turn_off_version_check()
    except UsageError as err:
        print(f"rules_torch_export: {label}: {err}", file=sys.stderr)
        return 2
    # The URL shows at once through a pipe too (`bazel run ... | tee`, a test).
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)
    # Ctrl-C stops the server even when the caller started it with SIGINT ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _serve(program, port)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
