"""The RSS of the Bazel server's processes, sampled once a second, for bench/llm_1b.py: each
sandboxed action's peak, each persistent worker's own RSS before, during and after its requests
(each request runs in a child forked from it: exporter/driver/worker.py), and a test's peak."""

import threading
import time

from exporter.tests import worker_harness


def _rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return int(fields["VmRSS"].split()[0]), int(fields["PPid"])
    except (OSError, KeyError, ValueError):  # it ended meanwhile, or is a zombie
        return None


def snapshot(server):
    """[(pid, parent pid, RSS KiB, its arguments)] of every process below the Bazel server."""
    found = []
    for pid, command in worker_harness.descendants(server).items():
        status = _rss_kib(pid)
        if status:
            found.append((pid, status[1], status[0], command.decode("utf-8", "replace").split("\0")))
    return found


class Sampler:
    """Samples snapshot(server) once a second in a thread; each sample is (time, phase, processes)."""

    def __init__(self, server):
        self.server, self.samples, self.phase = server, [], "build"
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._done.is_set():
            self.samples.append((time.time(), self.phase, snapshot(self.server)))
            self._done.wait(1)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()


def _is_exporter(args):
    return "exporter/main.py" in args


def _worker_parents(processes, server):
    return {pid: args for pid, ppid, _, args in processes if ppid == server and _is_exporter(args)
            and "--persistent_worker" in args}


def action_peaks(samples):
    """{action (its params file's name): [peak KiB, first seen, last seen]} of sandboxed actions."""
    peaks = {}
    for now, _, processes in samples:
        for _, _, rss, args in processes:
            params = [a.rsplit("/", 1)[-1].removesuffix("-0.params") for a in args if a.endswith(".params")]
            if _is_exporter(args) and params:
                peak, first, _ = peaks.get(params[0], (0, now, now))
                peaks[params[0]] = [max(peak, rss), first, now]
    return peaks


def _below(pid, processes):
    """The pids of processes below pid."""
    parents = {p: ppid for p, ppid, _, _ in processes}
    found = set()
    for p in parents:
        up = parents.get(p)
        while up is not None and up != pid:
            up = parents.get(up)
        if up == pid:
            found.add(p)
    return found


def worker_memory(samples, server, after):
    """{worker's --warm=command: {before, during, request, after, left}} in KiB: the parent's own
    RSS in the last sample before its first request's child, its peak while requests ran, the
    peak of any one request process below it, its RSS in `after` (a snapshot taken once the build
    ended) and how many processes were still below it then."""
    found = {}
    for _, _, processes in samples:
        rss = {pid: kib for pid, _, kib, _ in processes}
        for pid, args in _worker_parents(processes, server).items():
            name = next((a for a in args if a.startswith("--warm")), "--warm=?")
            entry = found.setdefault(pid, {"name": name, "before": rss[pid], "during": 0, "request": 0, "served": False})
            below = _below(pid, processes)
            entry["served"] = entry["served"] or bool(below)
            if not entry["served"]:
                entry["before"] = rss[pid]
            else:
                entry["during"] = max(entry["during"], rss[pid])
                entry["request"] = max([entry["request"]] + [rss[p] for p in below])
    final = {pid: kib for pid, _, kib, _ in after}
    return {entry["name"]: dict(entry, after=final.get(pid), left=len(_below(pid, after)))
            for pid, entry in found.items() if entry["served"]}


def phase_peak(samples, phase, server):
    """The peak, over the samples of phase, of the summed RSS (KiB) of the processes that are no
    persistent worker nor below one: a test's processes."""
    peak = 0
    for _, name, processes in samples:
        if name != phase:
            continue
        workers = _worker_parents(processes, server)
        inside = set(workers).union(*[_below(pid, processes) for pid in workers])
        peak = max(peak, sum(kib for pid, _, kib, _ in processes if pid not in inside))
    return peak
