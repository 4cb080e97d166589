"""One exporter request (`<command> CONFIG`, a command of actions.registry.ACTIONS): run it, and
turn any failure into one line, `ERROR: <target>: <what is wrong>; <what to change>`.

A failure leaves no output behind but the action's log (outputs["log"]), which holds torch's
full output and the traceback, and whose path the error names. Bazel keeps a failed action's
outputs, so the log stays readable while the .pt2/.pte never exist half-written. The CLI
(cli.py) and the worker's children (worker_child.py) both run requests through run().
"""

import argparse
import contextlib
import importlib
import json
import os
import tempfile
import traceback

from exporter.actions import registry
from exporter.core import atomic, manifest

# For runs without a declared log. Read at import, before isolation.private_cache_dir() points
# TMPDIR at a folder that goes away.
_LOG_DIR = os.path.join(tempfile.gettempdir(), "rules_torch_export-logs")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error is a failed request, not an exit
        raise ValueError(message)


# `warm_up CONFIG`: the request of a worker warm-up action (rules/private/warm_up.bzl). It carries
# the mnemonic of the action whose worker it warms, so Bazel starts that worker when the build
# starts instead of when the first such action can run; the worker warms up before it reads a
# request, so the request ends when the warm-up has. It writes only its marker (outputs["marker"]);
# one-shot, it is all it does.
WARM_UP = "warm_up"
WARM_UP_MARKER = b"warm\n"


# A deadline the rules always pass (rules/private/exporter_action.bzl); this is for hand-made runs.
DEFAULT_DEADLINE_SECONDS = 3600


def expand_params(arguments):
    """The arguments with each `@file` replaced by the file's lines (Bazel's params files)."""
    expanded = []
    for argument in arguments:
        if argument.startswith("@"):
            with open(argument[1:], encoding="utf-8") as f:
                expanded.extend(line for line in f.read().splitlines() if line)
        else:
            expanded.append(argument)
    return expanded


def parse(arguments):
    """(command, config path, deadline in seconds) from a request's arguments."""
    parser = _Parser(prog="exporter", add_help=False)
    parser.add_argument("command", choices=sorted(registry.ACTIONS) + [WARM_UP])
    parser.add_argument("config")
    parser.add_argument("--deadline", type=int, default=DEFAULT_DEADLINE_SECONDS)
    args = parser.parse_args(expand_params(arguments))
    return args.command, args.config, args.deadline


class Peek:
    """What the worker's parent reads of a request before a child runs it; never raises.

    action    the request's Action (None for a warm-up or a bad command line)
    label     the target its config names, or "?"
    identity  path of the toolchain identity file its config names, or None
    outputs   the absolute paths it will write
    deadline  seconds it may run
    """

    def __init__(self, arguments, output_root):
        self.action, self.label, self.identity, self.outputs = None, "?", None, ()
        self.deadline = DEFAULT_DEADLINE_SECONDS
        try:
            command, config_path, self.deadline = parse(arguments)
            self.action = registry.ACTIONS.get(command)
            with open(os.path.join(output_root, config_path), encoding="utf-8") as f:
                data = json.load(f)
            self.label, self.identity = str(data.get("label", "?")), data.get("identity")
            self.outputs = tuple(os.path.join(output_root, p) for p in data.get("outputs", {}).values())
        except Exception:  # the child reports what is wrong, in its one line
            pass


def _absolute_outputs(data, output_root):
    """Output paths that stay put when model code changes the current folder (os.chdir) or the
    request runs in a private folder of its inputs (input_tree.py)."""
    outputs = {role: os.path.join(output_root, path) for role, path in data.get("outputs", {}).items()}
    return dict(data, outputs=outputs)


def _remove_outputs(outputs):
    """Removes what this request wrote. Outputs another process wrote since (the same action
    in a newer build, while this stale request still ran) are not this request's to remove."""
    for role, path in outputs.items():
        if role != "log":
            atomic.remove_own(path)


NETWORK_NOT_BLOCKED = ("the network could not be blocked here (no network namespaces: see "
                       "docs/failure-modes.md); this action ran with network access")


def _record_open_network(outputs):
    """Notes in the manifest that the action ran with network access: its bytes could depend on
    it. Only then, so that every other manifest keeps its bytes."""
    path = outputs.get("manifest")
    if path and os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        manifest.write_json(path, dict(data, network="not blocked"))


def _write_log(label, outputs, text):
    """Writes a request's full output to its declared log (else a temp file); returns the path."""
    path = outputs.get("log")
    if not path:
        os.makedirs(_LOG_DIR, exist_ok=True)
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in label.lstrip("@/"))
        path = os.path.join(_LOG_DIR, name + ".log")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def run(arguments, output_root=None, network_blocked=True):
    """Runs one request; returns (exit code, text for stderr). Never raises.

    output_root is the folder the config's output paths are relative to (the current folder if
    None); network_blocked says whether the caller cut this process off the network.
    """
    from exporter.core import determinism
    from exporter.core.errors import UserError
    from exporter.driver import capture

    try:
        command, config_path, _ = parse(arguments)
    except (ValueError, OSError) as e:
        return 2, f"usage: exporter ({'|'.join(registry.ACTIONS)}) CONFIG.json, got {arguments}: {e}\n"
    try:
        with open(config_path, encoding="utf-8") as f:
            given = json.load(f)
        data = _absolute_outputs(given, output_root or os.getcwd())
    except (OSError, ValueError, TypeError, AttributeError) as e:
        return 2, f"exporter: cannot read the config {config_path}: {e}\n"
    label, outputs = data.get("label", "?"), data["outputs"]
    if command == WARM_UP:
        atomic.write_bytes(outputs["marker"], WARM_UP_MARKER)
        return 0, ""
    with capture.captured_output() as read_log:
        if not network_blocked:
            os.write(2, f"rules_torch_export: {NETWORK_NOT_BLOCKED}\n".encode())  # into the log
        try:
            action = registry.ACTIONS[command]
            config = action.config.from_json(data)
            with determinism.reproducible_math() if action.torch else contextlib.nullcontext():
                importlib.import_module(action.module).run(config)
            if not network_blocked:
                _record_open_network(outputs)
            _write_log(label, outputs, read_log())
            return 0, ""
        except UserError as e:
            message, trace = str(e), traceback.format_exc()
        except BaseException as e:  # A model may raise anything, sys.exit included.
            message = f"internal error in the exporter: {type(e).__name__}: {e}"
            trace = traceback.format_exc()
        _remove_outputs(outputs)
        log = read_log()
    log_path = _write_log(label, outputs, log + "\n" + trace)
    shown = given.get("outputs", {}).get("log", log_path)  # as the config names it: no machine path
    return 1, f"ERROR: {label}: {message}\n(full output: {shown})\n"
