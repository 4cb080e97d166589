"""The exporter's command line: `export CONFIG` and `lower CONFIG`, one-shot or as a worker.

Failures print one line, `ERROR: <target>: <what is wrong>; <what to change>`, and leave no
output behind but the action's log (outputs["log"]), which holds torch's full output and the
traceback, and whose path the error names. Bazel keeps a failed action's outputs, so the log
stays readable while the .pt2/.pte never exist half-written.
"""

import os
import sys
import tempfile
import traceback

COMMANDS = ("export", "lower")

# For runs without a declared log. Read at import, before hermetic.private_cache_dir() points
# TMPDIR at a folder that goes away.
_LOG_DIR = os.path.join(tempfile.gettempdir(), "rules_torch_export-logs")


def expand_params(argv):
    """Expands `@file` arguments (Bazel's params files, one argument per line)."""
    expanded = []
    for arg in argv:
        if arg.startswith("@"):
            with open(arg[1:], encoding="utf-8") as f:
                expanded.extend(line for line in f.read().splitlines() if line)
        else:
            expanded.append(arg)
    return expanded


def _remove_outputs(config):
    for role, path in config.get("outputs", {}).items():
        if role == "log":
            continue
        for candidate in (path, path + ".tmp"):
            if os.path.exists(candidate):
                os.remove(candidate)


def _write_log(config, text):
    """Writes a request's full output to its declared log (else a temp file); returns the path."""
    path = config.get("outputs", {}).get("log")
    if not path:
        os.makedirs(_LOG_DIR, exist_ok=True)
        label = config.get("label", "?")
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in label.lstrip("@/"))
        path = os.path.join(_LOG_DIR, name + ".log")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def run_request(argv):
    """Runs one request; returns (exit code, text for stderr). Never raises."""
    import json

    from exporter import capture
    from exporter.errors import UserError

    args = expand_params(argv)
    if len(args) != 2 or args[0] not in COMMANDS:
        return 2, f"usage: exporter (export|lower) CONFIG.json, got {args}\n"
    command, config_path = args
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    label = config.get("label", "?")
    with capture.captured_output() as read_log:
        try:
            if command == "export":
                from exporter import export

                export.run(config)
            else:
                from exporter import lower

                lower.run(config)
            _write_log(config, read_log())
            return 0, ""
        except UserError as e:
            message, trace = str(e), traceback.format_exc()
        except BaseException as e:  # A model may raise anything, sys.exit included.
            message = f"internal error in the exporter: {type(e).__name__}: {e}"
            trace = traceback.format_exc()
        _remove_outputs(config)
        log = read_log()
    log_path = _write_log(config, log + "\n" + trace)
    return 1, f"ERROR: {label}: {message}\n(full output: {log_path})\n"


def main(argv):
    warm = [a.split("=", 1)[1] for a in argv if a.startswith("--warm=")]
    argv = [a for a in argv if not a.startswith("--warm=")]
    if "--persistent_worker" in argv:
        from exporter import worker

        return worker.serve(warm[0] if warm else "lower")
    from exporter import hermetic

    cache_dir = hermetic.private_cache_dir()
    hermetic.block_network()  # also under --spawn_strategy=local, where no sandbox does it
    try:
        code, text = run_request(argv)
    finally:
        hermetic.remove_dir(cache_dir)
    sys.stderr.write(text)
    return code
