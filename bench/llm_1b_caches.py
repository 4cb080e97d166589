"""The 1B program's outputs through Bazel's caches, for bench/llm_1b.py --caches DIR: how long a
no-op rebuild takes with the server warm and after `bazel shutdown` (when Bazel must digest the
1 GB outputs again), then the outputs removed and fetched back from the disk cache (DIR/disk) and
from nginx as a remote cache (DIR/nginx/cache, tests/e2e/nginx_cache.py), each time with their
sha256."""

import os
import re
import subprocess
import time

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


def digest_times(workspace, target):
    """Lines: a no-op rebuild with the server warm, then after `bazel shutdown`."""
    seconds, _ = timed_build(workspace, target)
    lines = [f"  no-op rebuild, server warm: {seconds:.1f} s"]
    subprocess.run(["./bazelw", "shutdown"], cwd=workspace, check=True, capture_output=True)
    seconds, _ = timed_build(workspace, target)
    lines.append(f"  no-op rebuild after `bazel shutdown` (Bazel digests the outputs again): {seconds:.1f} s")
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
