"""Row (a) of the benchmark: the hand-written script, one cold Python process that exports and
lowers every model in sequence, with the exporter's own code and the actions' exact configs.

Usage: python baseline.py OUT_DIR CONFIG.json...   (run from the build's execroot)
With --repeat-last, the last export+lower pair runs twice and only the second (warm) run is
timed: row (g).
"""

import json
import os
import sys
import time


def load(path, out_dir):
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    config["outputs"] = {
        role: os.path.join(out_dir, os.path.basename(p)) for role, p in config["outputs"].items()
    }
    return config


def main(argv):
    repeat_last = "--repeat-last" in argv
    argv = [a for a in argv if a != "--repeat-last"]
    out_dir, paths = argv[0], argv[1:]
    sys.path.insert(0, os.environ["RULES_TORCH_EXPORT_ROOT"])
    from exporter import configs, export, lower

    configs = [load(p, out_dir) for p in paths]
    for config in configs:
        # A lowering reads the .pt2 that the export before it wrote to out_dir.
        if "pt2" in config:
            config["pt2"] = os.path.join(out_dir, os.path.basename(config["pt2"]))

    def run(config):
        if "model" in config:
            export.run(configs.ExportConfig.from_json(config))
        else:
            lower.run(configs.LowerConfig.from_json(config))

    for config in configs:
        run(config)
    if repeat_last:
        start = time.monotonic()
        for config in configs[-2:]:
            run(config)
        print(f"warm {time.monotonic() - start:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
