"""One exporter request (`<command> CONFIG`, a command of actions.registry.ACTIONS): run it, and
turn any failure into one line, `ERROR: <target>: <what is wrong>; <what to change>`.

A failure leaves no output behind but the action's log (outputs["log"]), which holds torch's
full output and the traceback, and whose path the error names. Bazel keeps a failed action's
outputs, so the log stays readable while the .pt2/.pte never exist half-written. The CLI
(cli.py) and the worker's children (worker_child.py) both run requests through run().
"""

import argparse
import contextlib
import errno
import importlib
import json
import os
import stat
import traceback

from exporter.actions import registry
from exporter.core import atomic, manifest
from exporter.driver import isolation



class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error is a failed request, not an exit
        raise ValueError(message)


# `warm_up CONFIG`: the request of a worker warm-up action (rules/private/lib/warm_up.bzl). It carries
# the mnemonic of the action whose worker it warms, so Bazel starts that worker when the build
# starts instead of when the first such action can run; the worker warms up before it reads a
# request, so the request ends when the warm-up has. It writes only its marker (outputs["marker"]);
# one-shot, it is all it does.
WARM_UP = "warm_up"
WARM_UP_MARKER = b"warm\n"


# The deadline when neither the target's `deadline` nor the build's flag reaches the request (a
# hand-made run, a remote executor); generous: the zoo's slowest action (a Hugging Face model's
# lowering) takes under a minute. The flag's default (toolchain/deadline.bzl) loads it from
# repository_facts.bzl.
DEFAULT_DEADLINE_SECONDS = 3600
# The flag, as a workspace that loads rules_torch_export names it; the rules pass the name that
# works where the build runs (`--//rules:exporter_deadline` in this repository's own workspace,
# where Bazel 4.2.3 ignores the other: docs/caching.md).
DEADLINE_FLAG = "@rules_torch_export//rules:exporter_deadline"

# Params files and configs are a few KiB; a larger "file" is not one Bazel wrote.
_MAX_FILE_BYTES = 64 << 20


def read_file(path):
    """The text of a regular file, read without blocking: a FIFO or a device named as a params
    file or config would otherwise stall the worker's single-threaded parent (and every request)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_FILE_BYTES:
            raise OSError(f"{path} is not a regular file of at most {_MAX_FILE_BYTES >> 20} MiB")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8")


def expand_params(arguments):
    """The arguments with each `@file` replaced by the file's lines (Bazel's params files)."""
    expanded = []
    for argument in arguments:
        if argument.startswith("@"):
            expanded.extend(line for line in read_file(argument[1:]).splitlines() if line)
        else:
            expanded.append(argument)
    return expanded


def parse(arguments):
    """A request's arguments: command, config (its path), deadline (the target's own, or 0),
    deadline_stamp (where the build's deadline is, or None) and deadline_flag (the flag's name)."""
    parser = _Parser(prog="exporter", add_help=False)
    parser.add_argument("command", choices=sorted(registry.ACTIONS) + [WARM_UP])
    parser.add_argument("config")
    parser.add_argument("--deadline", type=int, default=0)
    parser.add_argument("--deadline_stamp")
    parser.add_argument("--deadline_flag", default=DEADLINE_FLAG)
    return parser.parse_args(expand_params(arguments))


def build_deadline(stamp):
    """The build's --exporter_deadline: the stamp action (toolchain/deadline.bzl) writes it beside
    its stamp, which every exporter action declares and whose bytes never change. The seconds
    file itself is no action's input, so the flag is in no action's key (docs/caching.md). None
    where it cannot be read: a remote executor has the stamp only."""
    try:
        seconds = int(read_file(os.path.realpath(stamp) + ".seconds"))
    except (OSError, ValueError, TypeError):
        return None
    return seconds if seconds >= 1 else None


class Peek:
    """What the worker's parent reads of a request before a child runs it; never raises.

    action    the request's Action (None for a warm-up or a bad command line)
    label     the target its config names, or "?"
    identity  path of the toolchain identity file its config names, or None
    outputs   the absolute paths it will write
    roles     its outputs' roles ("pt2", "log", ...)
    deadline  seconds it may run; deadline_flag, the flag that sets it
    """

    def __init__(self, arguments, output_root):
        self.action, self.label, self.identity, self.outputs, self.roles = None, "?", None, (), ()
        self.deadline, self.deadline_flag = DEFAULT_DEADLINE_SECONDS, DEADLINE_FLAG
        try:
            options = parse(arguments)
            self.deadline_flag = options.deadline_flag
            stamp = options.deadline_stamp and os.path.join(output_root, options.deadline_stamp)
            self.deadline = options.deadline or build_deadline(stamp) or DEFAULT_DEADLINE_SECONDS
            self.action = registry.ACTIONS.get(options.command)
            data = json.loads(read_file(os.path.join(output_root, options.config)))
            self.label, self.identity = str(data.get("label", "?")), data.get("identity")
            self.roles = tuple(data.get("outputs", {}))
            self.outputs = tuple(os.path.join(output_root, p) for p in data.get("outputs", {}).values())
        except Exception:  # the child reports what is wrong, in its one line
            pass


def _absolute_outputs(data, output_root, place):
    """Output paths that stay put when model code changes the current folder (os.chdir) or the
    request runs in a private folder of its inputs (input_tree.py), each where place puts it."""
    outputs = {role: place(os.path.join(output_root, path)) for role, path in data.get("outputs", {}).items()}
    return dict(data, outputs=outputs)


def _remove_outputs(outputs):
    """Removes what this request wrote. Outputs another process wrote since (the same action
    in a newer build, while this stale request still ran) are not this request's to remove."""
    for role, path in outputs.items():
        if role != "log":
            atomic.remove_own(path)


NETWORK_NOT_BLOCKED = isolation.GAPS[isolation.NETWORK][1]


def _note_gaps(gaps):
    """One line in the log for each part of the sandbox the kernel refused this request."""
    for gap in gaps:
        os.write(2, f"rules_torch_export: {isolation.GAPS[gap][1]}\n".encode())


def _record_gaps(outputs, gaps):
    """Notes in the manifest what the action ran without (network access, files outside its
    outputs writable): its bytes, or other targets', could depend on it. Only then, so that every
    other manifest keeps its bytes."""
    recorded = {}
    for gap in gaps:
        entry = isolation.GAPS[gap][0]
        if entry:
            recorded[entry[0]] = entry[1]
    path = outputs.get("manifest")
    if recorded and path and os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        manifest.write_json(path, dict(data, **recorded))


def _shown_path(path, data, root):
    """path relative to the workspace or the execroot where it is in one (the same in every mode
    and on every machine), else as it is."""
    real = os.path.join(os.path.realpath(os.path.dirname(path) or "."), os.path.basename(path))
    roots = [os.path.realpath(root)]
    for src in (data.get("model") or {}).get("srcs", []):
        resolved = os.path.realpath(os.path.join(root, src))
        if resolved.endswith("/" + src):
            roots.append(resolved[: -len(src) - 1])
    return next((os.path.relpath(real, r) for r in roots if real.startswith(r + "/")), path)


def _written_outside(error, data, root):
    """The one-line message for a write outside the action's outputs, which the read-only view
    refused (isolation.contain in the worker, Bazel's sandbox one-shot) with EROFS; else None."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno == errno.EROFS and error.filename:
            model = data.get("model") or {}
            who = f"torch_model {model['label']}" if model.get("label") else "this action's code"
            return (f"{who} writes {_shown_path(os.fsdecode(error.filename), data, root)}, which is not an "
                    f"output of this action: exporter actions may write only their declared outputs and "
                    f"temp files (tempfile.gettempdir()), as in Bazel's sandbox; write it to a temp folder "
                    f"or stop writing it")
        error = error.__cause__ or error.__context__
    return None


def _write_log(label, outputs, text, log_dir):
    """Writes a request's full output to its declared log, else to a file in log_dir (a folder of
    this run's own: isolation.private_log_dir); returns the path."""
    path = outputs.get("log")
    if not path:
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in label.lstrip("@/"))
        path = os.path.join(log_dir or isolation.private_log_dir(), name + ".log")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def _warm_up(outputs, config):
    """A warm-up request's work: its marker (the worker warmed up before it read the request)."""
    if "marker" not in outputs:
        return 2, f"exporter: the config {config} of a warm_up request names no `marker` output\n"
    try:
        atomic.write_bytes(outputs["marker"], WARM_UP_MARKER)
    except OSError as e:
        return 1, f"exporter: cannot write the warm_up marker: {e.strerror}\n"
    return 0, ""


def _perform(command, data):
    """Runs the action `command` on its config's data."""
    from exporter.core import determinism

    action = registry.ACTIONS[command]
    config = action.config.from_json(data)
    with determinism.reproducible_math() if action.torch else contextlib.nullcontext():
        importlib.import_module(action.module).run(config)


def run(arguments, output_root=None, gaps=(), log_dir=None, place=None):
    """Runs one request; returns (exit code, text for stderr). Never raises.

    output_root is the folder the config's output paths are relative to (the current folder if
    None); gaps, the parts of the sandbox the caller could not give this process
    (isolation.contain); log_dir, where the log goes if the config declares none; place(output's
    absolute path) is where to write it instead (the worker child's private folders, staging.py),
    by default the output's path itself.
    """
    from exporter.core.errors import UserError
    from exporter.driver import capture

    try:
        options = parse(arguments)
    except (ValueError, OSError) as e:
        return 2, f"usage: exporter ({'|'.join(registry.ACTIONS)}) CONFIG.json, got {arguments}: {e}\n"
    root = output_root or os.getcwd()
    try:
        given = json.loads(read_file(options.config))
        data = _absolute_outputs(given, root, place or (lambda path: path))
    except (OSError, ValueError, TypeError, AttributeError, RecursionError) as e:
        return 2, f"exporter: cannot read the config {options.config}: {e}\n"
    label, outputs = data.get("label", "?"), data["outputs"]
    if options.command == WARM_UP:
        return _warm_up(outputs, options.config)
    failure: BaseException
    with capture.captured_output() as read_log:
        _note_gaps(gaps)
        try:
            _perform(options.command, data)
            _record_gaps(outputs, gaps)
            _write_log(label, outputs, read_log(), log_dir)
            return 0, ""
        except UserError as e:
            failure, message, trace = e, str(e), traceback.format_exc()
        except BaseException as e:  # A model may raise anything, sys.exit included.
            failure, message = e, f"internal error in the exporter: {type(e).__name__}: {e}"
            trace = traceback.format_exc()
        message = _written_outside(failure, data, root) or message
        _remove_outputs(outputs)
        log = read_log()
    log_path = _write_log(label, outputs, log + "\n" + trace, log_dir)
    shown = given.get("outputs", {}).get("log", log_path)  # as the config names it: no machine path
    return 1, f"ERROR: {label}: {message}\n(full output: {shown})\n"
