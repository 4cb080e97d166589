"""The 1B program's outputs through Bazel's caches, for bench/llm_1b.py --caches DIR: how long a
no-op rebuild takes with the server warm and after `bazel shutdown` (when Bazel must digest the
1 GB outputs again), then the outputs removed and fetched back from the disk cache (DIR/disk) and
from nginx as a remote cache (DIR/nginx/cache, tests/e2e/nginx_cache.py), each time with their
sha256."""

import json
import os
import re
import subprocess
import time

from bench import critical_path
from tests.e2e import nginx_cache

# The outputs whose removal makes Bazel fetch the export's and the lowering's results again.
OUTPUTS = ("_ep.pt2", ".pte", ".ptd")


def timed_build(workspace, target, *flags):
    """(seconds, Bazel's "N processes: ..." line) of one `./bazelw build`."""
    start = time.time()
    run = subprocess.run(["./bazelw", "build", *flags, target], cwd=workspace, check=True, capture_output=True,
                         text=True)
    processes = re.findall(r"INFO: \d+ process(?:es)?[:.].*", run.stderr)
    return time.time() - start, processes[-1] if processes else "no processes line"


def _remove_outputs(workspace, stem):
    for suffix in OUTPUTS:
        path = os.path.join(workspace, stem + suffix)
        if os.path.exists(path):
            os.remove(path)


def _execution_seconds(profile):
    """The execution phase of a build's --profile: in a no-op build, checking the outputs."""
    with open(profile, encoding="utf-8") as f:
        _, analysed, done = critical_path._phases(json.load(f)["traceEvents"])
    return done - analysed


def digest_times(workspace, target, cache_dir):
    """Lines: a no-op rebuild with the server warm, then after `bazel shutdown`, when Bazel has
    no digests in memory and reads the outputs again; each with its execution phase."""
    lines = []
    for name, fresh in (("server warm", False), ("after `bazel shutdown`", True)):
        if fresh:
            subprocess.run(["./bazelw", "shutdown"], cwd=workspace, check=True, capture_output=True)
        profile = os.path.join(cache_dir, "noop.profile.json")
        seconds, _ = timed_build(workspace, target, "--profile=" + profile)
        lines.append(f"  no-op rebuild, {name}: {seconds:.1f} s, its execution phase {_execution_seconds(profile):.1f} s")
    return lines


def round_trip(workspace, target, stem, cache_dir, digests):
    """Lines: the outputs removed and fetched back, from the disk cache, then from nginx. The
    first build of the bench, with both caches, filled them; digests(paths) gives their sha256."""
    lines = []
    with nginx_cache.NginxCache(cache_dir) as cache:
        for name, flag in (("disk cache", "--disk_cache=" + os.path.join(cache_dir, "disk")),
                           ("nginx remote cache", "--remote_cache=" + cache.url)):
            _remove_outputs(workspace, stem)
            seconds, processes = timed_build(workspace, target, flag)
            lines.append(f"  outputs removed, fetched from the {name}: {seconds:.1f} s ({processes.removeprefix('INFO: ')})")
            lines += digests()
    return lines


def cache_flags(cache_dir, cache):
    """The first build's flags: both caches, so that it fills them."""
    return ["--disk_cache=" + os.path.join(cache_dir, "disk"), "--remote_cache=" + cache.url]
