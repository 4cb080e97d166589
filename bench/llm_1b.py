"""Builds //models/llm:hf_llama_1b_llm (Llama 3.2 1B's shape, manual) and times it: each action's
wall time and peak RSS, the outputs' sizes and sha256 (docs/performance.md, "A billion parameters").

    ./bazelw run //bench:llm_1b                 # sandboxed: one process per action
    ./bazelw run //bench:llm_1b -- --worker     # in the persistent workers (RSS: the worker's)

Each action runs sandboxed (--config=noworker) so that its process is its own; a thread samples
the RSS of every exporter process under the Bazel server once a second and keys it by the
action's params file. It refuses to start with less than 14 GiB available: the float model alone
is about 5 GB.
"""

import argparse
import hashlib
import os
import subprocess
import threading
import time

from exporter.tests import worker_harness

TARGET = "//models/llm:hf_llama_1b_llm"
MIN_AVAILABLE_GIB = 14


def _available_gib():
    with open("/proc/meminfo", encoding="utf-8") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["MemAvailable"].split()[0]) / 2**20


def _sample(pid, command, peaks):
    """Adds the exporter process pid's RSS to peaks[action] = [peak KiB, first seen, last seen]."""
    args = command.decode("utf-8", "replace").split("\0")
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
    except (OSError, StopIteration):
        return
    if "exporter/main.py" not in args:
        return
    action = next((a.rsplit("/", 1)[-1].removesuffix("-0.params") for a in args if a.endswith(".params")),
                  "worker " + " ".join(a for a in args if a.startswith("--warm")))
    now = time.time()
    peak, first, _ = peaks.get(action, (0, now, now))
    peaks[action] = [max(peak, rss), first, now]


def _watch(server, peaks, done):
    while not done.is_set():
        for pid, command in worker_harness.descendants(server).items():
            _sample(pid, command, peaks)
        done.wait(1)


def _bazel(workspace, *args):
    return subprocess.run(["./bazelw", *args], cwd=workspace, check=True, capture_output=True, text=True).stdout


def _report(workspace, peaks, seconds):
    print(f"{TARGET}: built in {seconds:.0f} s")
    for action, (peak, first, last) in sorted(peaks.items(), key=lambda item: item[1][1]):
        print(f"  {action}: peak RSS {peak / 2**20:.2f} GiB, seen for {last - first:.0f} s")
    for suffix in (".pte", ".ptd", "_ep.pt2"):
        path = os.path.join(workspace, "bazel-bin/models/llm/hf_llama_1b_llm" + suffix)
        if os.path.exists(path):
            with open(path, "rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
            print(f"  {os.path.basename(path)}: {os.path.getsize(path):,} bytes, sha256 {digest}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help="build in the persistent workers")
    options = parser.parse_args()
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY", ".")
    if _available_gib() < MIN_AVAILABLE_GIB:
        raise SystemExit(f"llm_1b: {_available_gib():.1f} GiB available, less than {MIN_AVAILABLE_GIB}: not started")
    server = int(_bazel(workspace, "info", "server_pid").strip())
    peaks, done = {}, threading.Event()
    watcher = threading.Thread(target=_watch, args=(server, peaks, done), daemon=True)
    watcher.start()
    start = time.time()
    strategy = [] if options.worker else ["--config=noworker"]
    build = subprocess.run(["./bazelw", "build", *strategy, TARGET], cwd=workspace, check=False)
    done.set()
    watcher.join()
    _report(workspace, peaks, time.time() - start)
    raise SystemExit(build.returncode)


if __name__ == "__main__":
    main()
