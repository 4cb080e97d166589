"""Row (a) of the benchmark: the hand-written script, one cold Python process that runs every
action in sequence (calibrate, export, quantize, lower), with the exporter's own code and the
actions' exact configs.

Usage: python baseline.py OUT_DIR CONFIG.json...   (run from the build's execroot)
Each CONFIG is <name>.<command>.config.json, after the configs whose outputs it reads. Outputs
go to OUT_DIR, and inputs that an earlier config wrote are read from there.
With --warm-rerun, the actions that a change to a model's forward re-runs (all but the
calibrations) run a second time and only that warm run is timed: row (g). Pass the configs of
the programs the change reaches then.
"""

import importlib
import json
import os
import sys
import time

# The commands that a change to a model's forward re-runs (the calibration does not read the model).
FORWARD_DEPENDENT = ("export", "quantize", "lower")


def command_of(path):
    """The exporter command of a config file, <name>.<command>.config.json."""
    return os.path.basename(path).split(".")[-3]


def _replace(value, moved):
    """value with every path that is a key of moved replaced by its value."""
    if isinstance(value, dict):
        return {key: _replace(v, moved) for key, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, moved) for v in value]
    return moved.get(value, value) if isinstance(value, str) else value


def load(path, out_dir, moved):
    """The config's JSON with outputs in out_dir; moved maps earlier outputs to their new paths."""
    with open(path, encoding="utf-8") as f:
        config = _replace(json.load(f), moved)
    outputs = {role: os.path.join(out_dir, os.path.basename(p)) for role, p in config["outputs"].items()}
    moved.update({p: outputs[role] for role, p in config["outputs"].items()})
    config["outputs"] = outputs
    return config


def main(argv):
    warm_rerun = "--warm-rerun" in argv
    argv = [a for a in argv if a != "--warm-rerun"]
    out_dir, paths = argv[0], argv[1:]
    sys.path.insert(0, os.environ["RULES_TORCH_EXPORT_ROOT"])
    from exporter.actions import registry

    moved = {}
    actions = [(command_of(p), load(p, out_dir, moved)) for p in paths]

    def run(command, data):  # as exporter.driver.request.run does, without its log capture
        action = registry.ACTIONS[command]
        importlib.import_module(action.module).run(action.config.from_json(data))

    for action in actions:
        run(*action)
    if warm_rerun:
        start = time.monotonic()
        for command, data in actions:
            if command in FORWARD_DEPENDENT:
                run(command, data)
        print(f"warm {time.monotonic() - start:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
