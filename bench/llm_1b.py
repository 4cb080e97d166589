"""Builds //models/llm:hf_llama_1b_llm (Llama 3.2 1B's shape, manual) and times it: each action's
wall time and peak RSS, the outputs' sizes and sha256 against the last recorded ones, then its
generation test's wall time and peak RSS (docs/performance.md, "A billion parameters").

    ./bazelw run //bench:llm_1b                 # sandboxed: one process per action
    ./bazelw run //bench:llm_1b -- --worker     # in the persistent workers: their RSS before and after
    ./bazelw run //bench:llm_1b -- --caches DIR # also through the disk cache and nginx, and digest times

Each action runs sandboxed (--config=noworker) so that its process is its own; a thread samples
the RSS of every process under the Bazel server once a second (bench/llm_1b_samples.py). With
--worker, each request runs in a child forked from the warm worker, and the bench prints what the
worker itself holds before its request, while it runs and after it (only for actions that run:
an up-to-date build has none). It refuses to start with less than 14 GiB available: the float
model alone is about 5 GB.
"""

import argparse
import contextlib
import hashlib
import os
import subprocess
import time

from bench import llm_1b_caches, llm_1b_samples
from tests.e2e import nginx_cache

TARGET = "//models/llm:hf_llama_1b_llm"
TEST = "//models/llm:hf_llama_1b_llm_generation_test"
STEM = "bazel-bin/models/llm/hf_llama_1b_llm"
MIN_AVAILABLE_GIB = 14
# The outputs' sha256 since llm_ops became the default (2026-11-30, sandboxed; the first, without it:
# .pte 197d6c6e..., .ptd 3da01147..., .pt2 940803ad...): every later build must give them.
RECORDED = {
    ".pte": "49bf903ea685f3ecd2a3504bfd68cef0904529810b0a77f9d81db13d0d6aaf0b",
    ".ptd": "741232ed8ecb9a810c32dda24602cfffb5b2294324de58c12f08b16a2a79266c",
    "_ep.pt2": "dcbdb4bae93eabcc810038cba2000bdbe5220049e85b1a5251c22aa782073f66",
}


def _available_gib():
    with open("/proc/meminfo", encoding="utf-8") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["MemAvailable"].split()[0]) / 2**20


def _gib(kib):
    return f"{kib / 2**20:.2f} GiB"


def _bazel(workspace, *args):
    return subprocess.run(["./bazelw", *args], cwd=workspace, check=True, capture_output=True, text=True).stdout


def digest_lines(workspace):
    """Each output's size and sha256, and whether it is the recorded one."""
    lines = []
    for suffix in (".pte", ".ptd", "_ep.pt2"):
        path = os.path.join(workspace, STEM + suffix)
        if os.path.exists(path):
            with open(path, "rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
            recorded = RECORDED.get(suffix)
            same = {None: "", digest: ", the recorded one"}.get(recorded, f", NOT the recorded {recorded}")
            lines.append(f"  {os.path.basename(path)}: {os.path.getsize(path):,} bytes, sha256 {digest}{same}")
    return lines


def _build_lines(sampler, server, seconds):
    lines = [f"{TARGET}: built in {seconds:.0f} s"]
    for action, (peak, first, last) in sorted(llm_1b_samples.action_peaks(sampler.samples).items(),
                                              key=lambda item: item[1][1]):
        lines.append(f"  {action}: peak RSS {_gib(peak)}, seen for {last - first:.0f} s")
    after = llm_1b_samples.snapshot(server)
    for name, w in llm_1b_samples.worker_memory(sampler.samples, server, after).items():
        lines.append(f"  worker {name}: its own RSS {_gib(w['before'])} before its request, at most {_gib(w['during'])} "
                     f"while it ran, {_gib(w['after'] or 0)} after; the request's process peaked at "
                     f"{_gib(w['request'])}; {w['left']} processes left below it")
    return lines


def _test_lines(workspace, sampler, server):
    """Runs the generation test; its wall time, peak RSS and the tokens it reports."""
    sampler.phase = "test"
    start = time.time()
    run = subprocess.run(["./bazelw", "test", "--nocache_test_results", TEST], cwd=workspace, check=False,
                         capture_output=True)
    seconds = time.time() - start
    sampler.phase = "after"
    log = os.path.join(workspace, "bazel-testlogs", TEST.removeprefix("//").replace(":", "/"), "test.log")
    with open(log, encoding="utf-8", errors="replace") as f:  # its report: the lines the check prints
        report = [line.rstrip() for line in f if line.startswith((TEST + ":", "  "))]
    return run.returncode, [f"{TEST}: {'passed' if run.returncode == 0 else 'FAILED'} in {seconds:.0f} s, peak RSS "
                            f"{_gib(llm_1b_samples.phase_peak(sampler.samples, 'test', server))} (its processes, "
                            f"summed)"] + report


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help="build in the persistent workers")
    parser.add_argument("--caches", metavar="DIR", help="build through a disk cache and nginx in DIR, then time "
                        "fetching the outputs back from each and Bazel's digesting of them")
    options = parser.parse_args()
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY", ".")
    if _available_gib() < MIN_AVAILABLE_GIB:
        raise SystemExit(f"llm_1b: {_available_gib():.1f} GiB available, less than {MIN_AVAILABLE_GIB}: not started")
    server = int(_bazel(workspace, "info", "server_pid").strip())
    with contextlib.ExitStack() as stack:
        flags = [] if options.worker else ["--config=noworker"]
        if options.caches:
            flags += llm_1b_caches.cache_flags(options.caches, stack.enter_context(nginx_cache.NginxCache(options.caches)))
        with llm_1b_samples.Sampler(server) as sampler:
            start = time.time()
            build = subprocess.run(["./bazelw", "build", *flags, TARGET], cwd=workspace, check=False)
            lines = _build_lines(sampler, server, time.time() - start) + digest_lines(workspace)
            print("\n".join(lines), flush=True)
            if build.returncode:
                raise SystemExit(build.returncode)
            failed, lines = _test_lines(workspace, sampler, server)
            print("\n".join(lines), flush=True)
    if options.caches:
        print(f"{TARGET}'s outputs through Bazel's caches:", flush=True)
        print("\n".join(llm_1b_caches.digest_times(workspace, TARGET, options.caches)), flush=True)
        print("\n".join(llm_1b_caches.round_trip(workspace, TARGET, STEM, options.caches,
                                                 lambda: digest_lines(workspace))), flush=True)
    raise SystemExit(failed)


if __name__ == "__main__":
    main()
