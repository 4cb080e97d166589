"""Benchmarks the build against the hand-written one-process script it replaces.

    ./bazelw run //bench -- --zoo --models 4 16 64

For the zoo (every executorch_program under //models) and for each N, a generated package of N
small models, it builds in a fresh copy of this repository with its own output base and prints
one table: wall time per row and its ratio to the baseline (a), which runs in the same
process as the rows it is compared with:
  (a) one cold Python process that exports and lowers the same models in sequence
  (b) a clean build without the persistent worker        (c) a clean build with it
      ((a) and (c) run twice each, interleaved; the table shows their means)
  (d) an incremental build after a real change to one model's forward
  (e) a no-op build                                       (f) a clean build from --disk_cache
  (g) the warm in-process export + lowering of the changed model alone
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

from bench import small_models
from tests.e2e import harness

RESNET_EDIT = ("return self.fc(torch.flatten(self.pool(x), 1))",
               "return self.fc(torch.flatten(self.pool(x), 1)) * 0.5")


def timed(fn):
    start = time.monotonic()
    fn()
    return time.monotonic() - start


def config_files(ws, labels):
    """The actions' config files for these executorch_program labels, export before lowering."""
    bin_dir = os.path.join(ws.execroot, "bazel-out", "k8-fastbuild", "bin")
    files = []
    for label in labels:
        package, name = label[2:].split(":")
        lowering = os.path.join(bin_dir, package, f"{name}.lower.config.json")
        with open(lowering, encoding="utf-8") as f:
            exported_package, exported_name = json.load(f)["exported_label"][2:].split(":")
        files += [os.path.join(bin_dir, exported_package, f"{exported_name}.export.config.json"), lowering]
    return files


def run_baseline(ws, labels, scratch, repeat_last=False):
    """Runs bench/baseline.py cold on the actions' configs; returns (wall seconds, stdout)."""
    out_dir = tempfile.mkdtemp(dir=scratch)
    env = dict(os.environ, PYTHONHASHSEED="0", RULES_TORCH_EXPORT_ROOT=ws.path)
    argv = [sys.executable, os.path.join(ws.path, "bench", "baseline.py"), out_dir]
    argv += (["--repeat-last"] if repeat_last else []) + config_files(ws, labels)
    start = time.monotonic()
    done = subprocess.run(argv, cwd=ws.execroot, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    if done.returncode != 0:
        raise RuntimeError(f"baseline failed:\n{done.stderr[-3000:]}")
    return wall, done.stdout


def measure(ws, labels, edit, changed_label, disk_cache, scratch):
    """Runs rows (a) to (g) for these targets; returns ({row: seconds}, {row: [runs]}).

    This machine's speed drifts by tens of percent over minutes, so (a) and (c) each run twice,
    interleaved (a c ... a c), and their rows give the mean of the two runs.
    """
    build = lambda *flags: ws.build(*flags, *labels, log=False)  # noqa: E731

    def clean_build(*flags):
        ws.shutdown()  # stops the workers too: each clean build starts them cold
        ws.bazel("clean", log=False)
        return timed(lambda: build(*flags))

    ws.build("--nobuild", *labels, log=False)  # fetch and analyse once, untimed
    rows, runs = {}, {"a": [], "c": []}
    rows["b"] = clean_build("--config=noworker")
    runs["a"].append(run_baseline(ws, labels, scratch)[0])
    runs["c"].append(clean_build(f"--disk_cache={disk_cache}"))
    path, (old, new) = edit
    ws.write(path, ws.read(path).replace(old, new))
    rows["d"] = timed(lambda: build(f"--disk_cache={disk_cache}"))
    rows["e"] = timed(lambda: build(f"--disk_cache={disk_cache}"))
    ws.bazel("clean", log=False)
    rows["f"] = timed(lambda: build(f"--disk_cache={disk_cache}"))
    runs["a"].append(run_baseline(ws, labels, scratch)[0])
    runs["c"].append(clean_build())  # no disk cache: it holds these outputs now
    _, out = run_baseline(ws, [changed_label], scratch, repeat_last=True)
    rows["g"] = float(out.split("warm ")[1])
    for key, values in runs.items():
        rows[key] = sum(values) / len(values)
    return rows, runs


TARGETS = {  # row: (limit as a function of the rows, how the issue states it)
    "c": (lambda r, kind: r["a"] * (0.6 if kind == "small64" else 0.75), "(c) <= {} x (a)"),
    "d": (lambda r, kind: r["g"] + 2.0, "(d) <= (g) + 2 s"),
    "e": (lambda r, kind: 0.5, "(e) <= 0.5 s"),
    "f": (lambda r, kind: r["c"] * 0.1, "(f) <= 0.1 x (c)"),
}

ROW_NAMES = {
    "a": "baseline: one cold process",
    "b": "clean build, no worker",
    "c": "clean build, worker",
    "d": "incremental, one forward changed",
    "e": "no-op build",
    "f": "clean build from --disk_cache",
    "g": "warm in-process, changed model",
}


def _seconds(values):
    return " and ".join(f"{v:.1f} s" for v in values)


def print_table(name, count, rows, runs, kind):
    print(f"\n{name}: {count} programs; (a) runs {_seconds(runs['a'])}, (c) runs {_seconds(runs['c'])}")
    print(f"{'row':<4} {'what':<34} {'wall s':>8} {'x (a)':>7}  target")
    for key in "abcdefg":
        target = ""
        if key in TARGETS:
            limit_fn, text = TARGETS[key]
            limit = limit_fn(rows, kind)
            ok = "met" if rows[key] <= limit else "MISSED"
            factor = "0.6" if kind == "small64" else "0.75"
            target = f"{text.format(factor)}: {ok} (limit {limit:.2f} s)"
        print(f"({key})  {ROW_NAMES[key]:<34} {rows[key]:8.2f} {rows[key] / rows['a']:7.2f}  {target}")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, nargs="*", default=[4], help="sizes N of the small-model sets")
    parser.add_argument("--zoo", action="store_true", help="also benchmark every program under //models")
    args = parser.parse_args(argv)
    scratch = tempfile.mkdtemp(prefix="rules_torch_export_bench_")
    print(f"rules_torch_export benchmark, {datetime.date.today()}, {platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}; scratch: {scratch}")
    # Warm the page cache for torch's libraries, so row (a) and the builds start alike.
    subprocess.run([sys.executable, "-c", "import torch, executorch.exir"], capture_output=True)
    sets = [("zoo", None)] if args.zoo else []
    sets += [(f"small{n}", n) for n in args.models]
    for name, count in sets:
        include = harness.DEFAULT_INCLUDE + ("bench",) + (("models",) if count is None else ())
        ws = harness.Workspace.create(name, base=scratch, include=include)
        try:
            if count is None:
                query = ws.bazel("query", "kind('executorch_program rule', //models/...)", log=False).check()
                labels = sorted(query.stdout.split())
                edit = ("models/resnet.py", RESNET_EDIT)
                changed = "//models:resnet_pte"
            else:
                labels = small_models.write_package(ws, count)
                edit = ("bench_small/m0.py", small_models.FORWARD_EDIT)
                changed = labels[0]
            rows, runs = measure(ws, labels, edit, changed, os.path.join(scratch, name + "-disk-cache"), scratch)
            print_table(name, len(labels), rows, runs, name)
        finally:
            ws.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
