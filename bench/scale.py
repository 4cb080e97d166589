"""The scale benchmark: how long Bazel takes to load and analyse a package of N models.

    ./bazelw run //bench:scale -- --models 1000 10000
    ./bazelw run //bench:scale -- --models 200 --noop       (also builds them, then a no-op build)
    ./bazelw run //bench:scale -- --models 1000 --tree /path/to/other/checkout --profile /tmp/p
    ./bazelw run //bench:scale -- --models 10000 --floor        (and Bazel's floor: trivial rules)
    ./bazelw run //bench:scale -- --models 10000 --jvm=-XX:+UseParallelGC  (a flag for the server's JVM)

The package is a user's: a scratch workspace (like examples/consumer) loads the rules of this
checkout, or of --tree, through local_repository, and its package //bench_scale holds N models,
each with its own file, shape_spec, torch_model, torch_export, executorch_program and
numerics_test (one target that writes its config and launcher). For each N, on
an output base of its own, it times from outside, with wall clocks:
  first analysis   `bazel build --nobuild` on a server started for it (repositories fetched)
  cached analysis  the same command again
  query            `bazel query 'deps(//bench_scale:all)'` on that warm server
  no-op build      (--noop) a second `bazel build` after a real one, on a warm server
and prints each per 1,000 targets too, and the CPU seconds the Bazel server spent on it (which
hardly depend on what else a shared machine runs). With --profile DIR, the first analysis also writes
Bazel's --profile and --starlark_cpu_profile (pprof) there.

--floor also times, for each N, two packages of trivial rules (FLOOR_RULES) in place of ours:
  floor   the same five targets per model with the same dependencies: four rules of one file
          write each and a test rule with runfiles; what Bazel itself costs for that graph,
          which no rule set goes under;
  chain7  issue 46's floor, "a trivial rule declared directly, chained in sevens, each writing
          one file": seven such steps per model, each on the one before.
"""

import argparse
import datetime
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

from tests.e2e import harness

PACKAGE = "bench_scale"

WORKSPACE = '''workspace(name = "bench_scale_workspace")

local_repository(
    name = "rules_torch_export",
    path = "{tree}",
)

load("@rules_torch_export//third_party:repositories.bzl", "offline_bazel_repositories")

offline_bazel_repositories()
'''

TOOLCHAIN = '''
load("@rules_torch_export//toolchain:repositories.bzl", "torch_export_toolchain_repositories")

torch_export_toolchain_repositories()

register_toolchains("@rules_torch_export//toolchain:all")
'''

# What a user's .bazelrc needs (examples/consumer/.bazelrc), without the optional flags of newer
# Bazel: with them, build and query would read BUILD files with different Starlark semantics, and
# every query would load the package anew.
BAZELRC = """build --incompatible_strict_action_env
build --incompatible_enable_cc_toolchain_resolution
build --nosandbox_debug
"""

MODEL = '''"""Scale benchmark model {index}."""

from torch import nn


def model():
    return nn.Sequential(nn.Linear(4, {width}), nn.ReLU(), nn.Linear({width}, 2))
'''

BUILD_HEADER = '''load(
    "@rules_torch_export//rules:defs.bzl",
    "dim",
    "executorch_program",
    "numerics_test",
    "shape_spec",
    "tensor",
    "torch_export",
    "torch_model",
)
'''

BUILD_MODEL = '''
shape_spec(
    name = "m{index}_spec",
    dims = {{"batch": dim(
        max = 8,
        min = 1,
    )}},
    inputs = {{"input": tensor([
        "batch",
        4,
    ])}},
)

torch_model(
    name = "m{index}",
    srcs = ["m{index}.py"],
    entry = "{package}.m{index}:model",
)

torch_export(
    name = "m{index}_ep",
    model = ":m{index}",
    shapes = ":m{index}_spec",
)

executorch_program(
    name = "m{index}_pte",
    exported = ":m{index}_ep",
)

numerics_test(
    name = "m{index}_test",
    program = ":m{index}_pte",
)
'''


# The floor: Bazel's own cost for a package of this shape. Each model's five targets depend on
# each other like ours do; each step writes one file and passes its files on in a provider, and
# the test is a shell script with those files as runfiles.
FLOOR_RULES = '''"""Trivial rules in the shape of a model's targets (bench/scale.py --floor)."""

FloorInfo = provider(fields = ["files"])

def _step_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".out")
    ctx.actions.write(out, ctx.label.name)
    files = depset([out], transitive = [dep[FloorInfo].files for dep in ctx.attr.deps])
    return [DefaultInfo(files = depset([out])), FloorInfo(files = files)]

step = rule(implementation = _step_impl, attrs = {
    "deps": attr.label_list(providers = [FloorInfo]),
    "srcs": attr.label_list(allow_files = True),
})

def _step_test_impl(ctx):
    script = ctx.actions.declare_file(ctx.label.name)
    ctx.actions.write(script, "#!/bin/sh\\nexit 0\\n", is_executable = True)
    files = depset(transitive = [dep[FloorInfo].files for dep in ctx.attr.deps])
    return [DefaultInfo(executable = script, runfiles = ctx.runfiles(transitive_files = files))]

step_test = rule(implementation = _step_test_impl, attrs = {"deps": attr.label_list(providers = [FloorInfo])}, test = True)
'''

FLOOR_MODEL = '''
step(name = "m{index}_spec")

step(
    name = "m{index}",
    srcs = ["m{index}.py"],
)

step(
    name = "m{index}_ep",
    deps = [
        ":m{index}",
        ":m{index}_spec",
    ],
)

step(
    name = "m{index}_pte",
    deps = [":m{index}_ep"],
)

step_test(
    name = "m{index}_test",
    deps = [":m{index}_pte"],
)
'''


# Issue 46's floor: seven one-file steps per model, each on the one before.
CHAIN_MODEL = """
step(
    name = "m{index}_1",
    srcs = ["m{index}.py"],
)
""" + "".join(f"""
step(
    name = "m{{index}}_{n}",
    deps = [":m{{index}}_{n - 1}"],
)
""" for n in range(2, 8))

FLOOR_MODELS = {"floor": FLOOR_MODEL, "chain7": CHAIN_MODEL}


def write_workspace(path, tree, count, floor=None):
    """A workspace at path that loads the rules from tree, with //bench_scale of `count` models
    (with floor, a key of FLOOR_MODELS: FLOOR_RULES in place of the rules, and only the
    repositories Bazel needs)."""
    folder = os.path.join(path, PACKAGE)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(path, "WORKSPACE"), "w", encoding="utf-8") as f:
        f.write(WORKSPACE.format(tree=tree) + ("" if floor else TOOLCHAIN))
    with open(os.path.join(path, ".bazelrc"), "w", encoding="utf-8") as f:
        f.write(BAZELRC)
    shutil.copyfile(os.path.join(tree, ".bazelversion"), os.path.join(path, ".bazelversion"))
    with open(os.path.join(path, "BUILD"), "w", encoding="utf-8") as f:
        f.write("")
    with open(os.path.join(folder, "__init__.py"), "w", encoding="utf-8") as f:
        f.write("")
    for index in range(count):
        with open(os.path.join(folder, f"m{index}.py"), "w", encoding="utf-8") as f:
            f.write(MODEL.format(index=index, width=4 + index % 16))
    if floor:
        with open(os.path.join(folder, "floor.bzl"), "w", encoding="utf-8") as f:
            f.write(FLOOR_RULES)
        header, model = 'load(":floor.bzl", "step", "step_test")\n', FLOOR_MODELS[floor]
    else:
        header, model = BUILD_HEADER, BUILD_MODEL
    with open(os.path.join(folder, "BUILD"), "w", encoding="utf-8") as f:
        f.write(header + "".join(model.format(index=i, package=PACKAGE) for i in range(count)))


def server_cpu(ws):
    """CPU seconds the workspace's Bazel server has used so far, all threads (0 if none runs)."""
    try:
        with open(os.path.join(ws.output_base, "server", "server.pid.txt"), encoding="utf-8") as f:
            pid = f.read().strip()
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def timed(ws, command, *args, timeout=harness.BAZEL_TIMEOUT):
    """(wall seconds, server CPU seconds) of one Bazel command, which must succeed.

    The CPU seconds hardly depend on what else the machine runs; on a shared machine, compare
    those. The first command of a server counts the server's start too.
    """
    start, cpu = time.monotonic(), server_cpu(ws)
    ws.bazel(command, *args, log=False, timeout=timeout).check()
    return time.monotonic() - start, server_cpu(ws) - cpu


def measure(ws, name, profile_dir, noop, first="m0_test"):
    """{row: (wall seconds, server CPU seconds)} for the package in ws; name names its profiles,
    first is the target whose analysis fetches the repositories, untimed."""
    pattern = f"//{PACKAGE}:all"
    ws.build("--nobuild", f"//{PACKAGE}:{first}", log=False)
    ws.shutdown()
    profile = []
    if profile_dir:
        os.makedirs(profile_dir, exist_ok=True)
        profile = [f"--profile={os.path.join(profile_dir, f'analysis-{name}.json')}",
                   f"--starlark_cpu_profile={os.path.join(profile_dir, f'starlark-{name}.pprof')}"]
    rows = {"first analysis": timed(ws, "build", "--nobuild", *profile, pattern)}
    rows["cached analysis"] = timed(ws, "build", "--nobuild", pattern)
    rows["query deps"] = timed(ws, "query", f"deps({pattern})", "--output=label")
    if noop:
        ws.bazel("build", "--keep_going", pattern, log=False, timeout=48 * 3600).check()
        rows["no-op build"] = timed(ws, "build", pattern)
    return rows


def target_count(ws):
    """The package's rule targets, hidden ones included (source files not counted)."""
    query = ws.bazel("query", f"kind(rule, //{PACKAGE}:*)", "--output=label", log=False).check()
    return len(query.stdout.split())


def git_commit(tree):
    """The short commit of tree, or '?'."""
    done = subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "?"


ROWS = ("first analysis", "cached analysis", "query deps", "no-op build")


def report(count, targets, rows, label):
    """Two lines per N and package, wall and server CPU: seconds, then seconds per 1,000
    targets ('-': not measured)."""
    lines = []
    for kind, column in (("wall", 0), ("cpu", 1)):
        seconds = " ".join(f"{rows[r][column]:>15.2f}" if r in rows else f"{'-':>15}" for r in ROWS)
        per_k = " ".join(f"{1000 * rows[r][column] / targets:>8.3f}" if r in rows else f"{'-':>8}" for r in ROWS)
        lines.append(f"{count:7d} {label:>7} {targets:8d} {kind:>4} {seconds}   {per_k}")
    return "\n".join(lines)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, nargs="+", default=[1000], help="sizes N of the package")
    parser.add_argument("--tree", default=harness.source_root(), help="the checkout to measure (default: this one)")
    parser.add_argument("--profile", help="a folder for the first analysis's --profile and --starlark_cpu_profile")
    parser.add_argument("--noop", action="store_true", help="also build everything, then time a no-op build (long)")
    parser.add_argument("--floor", action="store_true", help="also time packages of trivial rules: floor and chain7")
    parser.add_argument("--jvm", action="append", default=[], metavar="FLAG",
                        help="a flag for the Bazel server's JVM (as --host_jvm_args), e.g. --jvm=-XX:+UseParallelGC")
    parser.add_argument("--keep", action="store_true", help="keep the scratch workspaces (to look, or re-run Bazel)")
    args = parser.parse_args(argv)
    tree = os.path.realpath(args.tree)
    base = tempfile.mkdtemp(prefix="rules_torch_export_scale_")
    print(f"rules_torch_export scale benchmark, {datetime.date.today()}, {platform.machine()}, "
          f"{os.cpu_count()} cores; rules from {tree} at {git_commit(tree)}; JVM flags: {args.jvm or 'none'}; "
          f"scratch: {base}")
    print(f"{'models':>7} {'package':>7} {'targets':>8} {'':>4} " + " ".join(f"{r:>15}" for r in ROWS)
          + "   s per 1,000 targets")
    for count in args.models:
        for label in ("rules", *FLOOR_MODELS) if args.floor else ("rules",):
            name = f"{label}{count}"
            ws = harness.Workspace(os.path.join(base, name), os.path.join(base, "output_bases", name),
                                   os.path.join(base, "home"))
            ws.jvm_flags = tuple(args.jvm)  # Bazel's JVM as a user runs it (or --jvm), not the tests'
            try:
                write_workspace(ws.path, tree, count, floor=label if label in FLOOR_MODELS else None)
                rows = measure(ws, name, args.profile, args.noop, "m0_7" if label == "chain7" else "m0_test")
                print(report(count, target_count(ws), rows, label), flush=True)
            finally:
                ws.shutdown()
                if not args.keep:
                    shutil.rmtree(ws.path, ignore_errors=True)
                    shutil.rmtree(ws.output_base, ignore_errors=True)
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
