"""One exporter request (`<command> CONFIG`, a command of actions.registry.ACTIONS): run it, and
turn any failure into one line, `ERROR: <target>: <what is wrong>; <what to change>`.

A failure leaves no output behind but the action's log (outputs["log"]), which holds torch's
full output and the traceback, and whose path the error names. Bazel keeps a failed action's
outputs, so the log stays readable while the .pt2/.pte never exist half-written. The CLI
(cli.py) and the worker's children (worker_child.py) both run requests through run().
"""

import argparse
import importlib
import json
import os
import shutil
import tempfile
import traceback

from exporter.actions import registry

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


def parse(arguments):
    """(command, config path) from a request's arguments; `@file` expands a params file."""
    parser = _Parser(prog="exporter", fromfile_prefix_chars="@", add_help=False)
    parser.add_argument("command", choices=sorted(registry.ACTIONS) + [WARM_UP])
    parser.add_argument("config")
    args = parser.parse_args(arguments)
    return args.command, args.config


def _remove_outputs(outputs):
    for role, path in outputs.items():
        if role == "log":
            continue
        for candidate in (path, path + ".tmp"):
            if os.path.isdir(candidate):
                shutil.rmtree(candidate)
            elif os.path.exists(candidate):
                os.remove(candidate)


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


def describe(arguments):
    """(the request's Action or None, the target label its config names or "?"), for messages
    about runs that crashed."""
    try:
        command, config_path = parse(arguments)
    except ValueError:
        return None, "?"
    try:
        with open(config_path, encoding="utf-8") as f:
            label = json.load(f).get("label", "?")
    except Exception:
        label = "?"
    return registry.ACTIONS.get(command), label  # None for WARM_UP


def run(arguments):
    """Runs one request; returns (exit code, text for stderr). Never raises."""
    from exporter.core import determinism
    from exporter.driver import capture
    from exporter.core.errors import UserError

    try:
        command, config_path = parse(arguments)
    except ValueError as e:
        return 2, f"usage: exporter ({'|'.join(registry.ACTIONS)}) CONFIG.json, got {arguments}: {e}\n"
    with open(config_path, encoding="utf-8") as f:
        data = json.load(f)
    label, outputs = data.get("label", "?"), data.get("outputs", {})
    if command == WARM_UP:
        with open(outputs["marker"], "wb") as f:
            f.write(WARM_UP_MARKER)
        return 0, ""
    with capture.captured_output() as read_log:
        try:
            action = registry.ACTIONS[command]
            config = action.config.from_json(data)
            with determinism.reproducible_math():
                importlib.import_module(action.module).run(config)
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
    return 1, f"ERROR: {label}: {message}\n(full output: {log_path})\n"
