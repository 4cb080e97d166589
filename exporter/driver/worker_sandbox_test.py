"""The worker keeps the promises of Bazel's linux-sandbox (docs/failure-modes.md): a model built at
import time gets the bytes of a one-shot run, model code writes nowhere but its outputs, what a
request starts dies with it, a request sees no other request's pipe, a stop stops the request
even before it made its process group, and a restart does not wait for a request that a newer one
superseded. Each test failed before these promises were kept."""

import hashlib
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

from exporter.driver import race_pause
from exporter.tests.worker_harness import (MAIN, SPEC, Worker, action_params, children_of, is_running, one_shot,
                                           params_for, wait_until)

MODELS = textwrap.dedent(
    """
    import os
    import torch

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 3)

        def forward(self, x):
            return torch.relu(self.linear(x))

    def escapes():
        # Processes that leave the request's process group: a session of their own, and the group
        # of the request's parent (the worker's, before PID namespaces), which killpg missed.
        import subprocess, time
        subprocess.Popen(["sleep", "317"], start_new_session=True)
        subprocess.Popen(["sleep", "318"], process_group=os.getpgid(os.getppid()))
        time.sleep(300)

    def writes_beside_its_source():
        import pathlib
        pathlib.Path(__file__).resolve().parent.joinpath("written_by_model.txt").write_text("x")
        return Tiny()

    def writes_into_other_outputs():
        import pathlib
        root = pathlib.Path(__file__).resolve().parents[1]
        root.joinpath("bazel-out", "other", "other.pt2").write_text("x")
        return Tiny()

    def writes_beside_its_outputs():
        # Into its own outputs' folder, where the package's other targets write theirs.
        import pathlib
        root = pathlib.Path(__file__).resolve().parents[1]
        root.joinpath("bazel-out", "writes", "neighbour.pt2").write_text("x")
        return Tiny()

    def waits_for_its_sibling():
        import pathlib, time
        from zoo.markers import FOLDER
        marker = pathlib.Path(FOLDER) / "sibling.marker"
        while not marker.exists():  # written by reads_every_descriptor, which starts after this
            time.sleep(0.05)
        return Tiny()

    def reads_every_descriptor():
        # Reads every pipe it holds: a sibling's answer, which then never reached the worker.
        import fcntl, pathlib, stat
        from zoo.markers import FOLDER
        pathlib.Path(FOLDER).joinpath("sibling.marker").write_text("")
        readable = []
        for name in os.listdir("/proc/self/fd"):
            try:
                fd, flags = int(name), fcntl.fcntl(int(name), fcntl.F_GETFL)
                if stat.S_ISFIFO(os.fstat(fd).st_mode) and flags & os.O_ACCMODE != os.O_WRONLY:
                    readable.append(fd)
            except OSError:
                pass
        for fd in readable:
            os.set_blocking(fd, False)
            try:
                os.read(fd, 1 << 16)
            except BlockingIOError:
                pass
        if readable:
            raise RuntimeError(f"this request could read the pipes {readable}, which it did not open")
        return Tiny()
    """
)

# Built when its module is imported, without a seed: the model, and what else a one-shot
# run starts with, drawn into a buffer so that the .pt2 shows it.
UNSEEDED = """import random

import numpy
import torch

model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
model.register_buffer("state", torch.tensor([
    random.random(), float(numpy.random.rand()), float(torch.get_default_dtype() == torch.float32),
    float(torch.is_grad_enabled()), float(torch.are_deterministic_algorithms_enabled()),
    float(torch.backends.mkldnn.is_available()), float(torch.get_num_threads()),
]))
"""
SPEC8 = dict(SPEC, inputs=[{"name": "input", "value": {"tensor": {"shape": ["batch", 8], "dtype": "float32"}}}])

# A model that hangs as its module loads, once it has said so.
HANGS = "import pathlib, time\nfrom zoo.markers import FOLDER\npathlib.Path(FOLDER, {marker!r}).write_text('')\ntime.sleep(600)\n"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("work")
    (tmp_path / "zoo").mkdir()
    (tmp_path / "zoo" / "__init__.py").write_text("")
    (tmp_path / "zoo" / "models.py").write_text(MODELS)
    (tmp_path / "zoo" / "unseeded.py").write_text(UNSEEDED)
    (tmp_path / "bazel-out" / "other").mkdir(parents=True)
    (tmp_path / "bazel-out" / "writes").mkdir(parents=True)
    (tmp_path / "identity.txt").write_text("python 3.11.7\ntorch==2.13.0+cpu\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(old)


@pytest.fixture(scope="module")
def markers(workdir):
    """A folder the test and its models share (zoo.markers.FOLDER): model code may write nowhere
    but its own private folders and temp files, but /dev/shm stays writable, as in linux-sandbox."""
    folder = tempfile.mkdtemp(prefix="rules_torch_export_test_", dir="/dev/shm")
    (workdir / "zoo" / "markers.py").write_text(f"FOLDER = {folder!r}\n")
    yield pathlib.Path(folder)
    shutil.rmtree(folder)


@pytest.fixture(scope="module")
def pauses(tmp_path_factory):
    """The folder of the module worker's pause right after a fork (race_pause); disarmed (its
    .reached file exists) but while test_a_stop_that_comes_before_the_child_made_its_group_stops_it
    holds a child."""
    folder = tmp_path_factory.mktemp("pauses")
    (folder / "fork.reached").write_text("")
    return folder


@pytest.fixture(scope="module")
def worker(workdir, pauses):
    """A warm worker (its warm-up exports and lowers, drawing from torch's generator)."""
    w = Worker(env={race_pause.VARIABLE: f"fork:{pauses}"})
    yield w
    if w.proc.poll() is None:
        w.close()


def _digests(workdir, *names):
    return [hashlib.sha256((workdir / name).read_bytes()).hexdigest() for name in names]


def test_a_model_built_at_import_gets_the_same_bytes_from_a_warm_worker_and_one_shot(worker, workdir):
    """Measured before: a warm worker's warm-up had drawn from torch's generator, and the entry's
    module was imported before any seed, so the worker and a one-shot run gave other weights."""
    params = params_for("unseeded", "zoo.unseeded:model", spec=SPEC8)
    response = worker.request(params)
    assert response["exitCode"] == 0, response["output"]
    from_worker = _digests(workdir, "unseeded.pt2", "unseeded.pt2.json")
    done = one_shot(params)
    assert done.returncode == 0, done.stderr
    assert _digests(workdir, "unseeded.pt2", "unseeded.pt2.json") == from_worker


@pytest.mark.parametrize("entry, written", [
    ("zoo.models:writes_beside_its_source", "zoo/written_by_model.txt"),
    ("zoo.models:writes_into_other_outputs", "bazel-out/other/other.pt2"),
    # Before: allowed, as its outputs' folder was writable whole (now it writes into a private one).
    ("zoo.models:writes_beside_its_outputs", "bazel-out/writes/neighbour.pt2"),
])
@pytest.mark.parametrize("run", ["worker", "one-shot"])
def test_model_code_cannot_write_outside_its_outputs(worker, workdir, entry, written, run):
    """linux-sandbox mounts everything but a spawn's outputs read-only; so does the worker's child.
    Before: the worker wrote both files (the first one into the workspace), with exit code 0."""
    params = params_for("writer", entry, outputs="bazel-out/writes")
    if run == "worker":
        response = worker.request(params)
        code, output = response["exitCode"], response["output"]
    else:
        done = one_shot(params)
        code, output = done.returncode, done.stderr
    assert code == 1
    assert output.splitlines()[0] == (
        f"ERROR: //zoo:writer: torch_model //zoo:model writes {written}, which is not an output of this "
        f"action: exporter actions may write only their declared outputs and temp files "
        f"(tempfile.gettempdir()), as in Bazel's sandbox; write it to a temp folder or stop writing it"), output
    assert len(output.splitlines()) == 2  # and "(full output: ...)"
    assert not (workdir / written).exists()
    assert not (workdir / "bazel-out" / "writes" / "writer.pt2").exists()


def _pids(pattern):
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout
    return [int(pid) for pid in found.split()]


def _wait_until_gone(pattern, seconds=60):
    """Waits for every process matching pattern to end; kills (by pid) and fails if they do not."""
    end = time.monotonic() + seconds
    while _pids(pattern) and time.monotonic() < end:
        time.sleep(0.1)
    left = _pids(pattern)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{pattern}: what the model started outlived its request"


ESCAPED = "^sleep 31[78]$"


def test_processes_that_leave_the_request_s_group_die_at_its_deadline(worker):
    """Before: a process in a session of its own, or in the worker's group, outlived the
    deadline (killpg missed it, and PDEATHSIG is not inherited)."""
    response = worker.request(params_for("escapes", "zoo.models:escapes", deadline=5))
    assert response["exitCode"] == 1 and "deadline of 5 s" in response["output"], response
    _wait_until_gone(ESCAPED)


def test_processes_that_leave_the_request_s_group_die_with_a_superseded_request(worker, workdir):
    old = worker.send(params_for("escapes_twice", "zoo.models:escapes"))
    end = time.monotonic() + 120
    while len(_pids(ESCAPED)) < 2:
        assert time.monotonic() < end, "the model never started its processes"
        time.sleep(0.1)
    new = worker.send(params_for("escapes_twice", "zoo.models:Tiny"))
    response = worker.receive(timeout=120)
    assert response["requestId"] == new and response["exitCode"] == 0, (old, response)
    _wait_until_gone(ESCAPED)


def test_a_request_cannot_read_a_sibling_s_answer(worker, workdir, markers):
    """Before: each child inherited the read ends of the other running children's pipes; one
    that read them took a sibling's answer, and the sibling's success was reported as a crash."""
    (markers / "sibling.marker").unlink(missing_ok=True)
    first = worker.send(params_for("sibling_a", "zoo.models:waits_for_its_sibling"))
    second = worker.send(params_for("sibling_b", "zoo.models:reads_every_descriptor"))
    by_id = {r["requestId"]: r for r in (worker.receive(), worker.receive())}
    assert by_id[first]["exitCode"] == 0, by_id[first]["output"]
    assert by_id[second]["exitCode"] == 0, by_id[second]["output"]


@pytest.mark.parametrize("change", ["lock", "exporter"])
def test_a_restart_does_not_wait_for_a_superseded_request(workdir, markers, change):
    """After Ctrl-C, the rebuild's request supersedes one still running, and also needs a restart
    (a new lock, an edited exporter). Before: the worker waited for the superseded child to end,
    which a hanging one does at its deadline (3600 s by default)."""
    copy = workdir / f"restart_{change}"
    shutil.copytree(os.path.dirname(MAIN), copy / "exporter")
    identity = workdir / "identity.txt"
    original = identity.read_text()
    w = Worker(main=str(copy / "exporter" / "main.py"), warm="bundle")  # no warm-up: it plays no part
    try:
        started = markers / f"hang_{change}.started"
        (workdir / "zoo" / f"hang_{change}.py").write_text(HANGS.format(marker=started.name))
        hanging = w.send(params_for(f"restart_{change}", f"zoo.hang_{change}:Tiny", deadline=3600))
        end = time.monotonic() + 120
        while not started.exists():  # the model runs (it read its config, which comes next)
            assert time.monotonic() < end, "the hanging model never started"
            time.sleep(0.1)
        if change == "lock":
            identity.write_text(original + "einops==0.8.1\n")
        else:
            lower = copy / "exporter" / "actions" / "lower.py"
            lower.write_text(lower.read_text() + "\n# edited\n")
        rebuilt = w.send(params_for(f"restart_{change}", "zoo.models:Tiny"))
        response = w.receive(timeout=120)
        assert response["requestId"] == rebuilt and response["exitCode"] == 0, (hanging, response)
        assert w.proc.poll() is None and not children_of(w.proc.pid)
    finally:
        identity.write_text(original)
        w.close()


@pytest.mark.parametrize("run", ["worker", "one-shot"])
def test_a_stop_that_comes_before_the_child_made_its_group_stops_it(worker, pauses, tmp_path, run):
    """A child is held right after its fork (race_pause), before its own setpgid(0, 0); then a
    newer request supersedes it (worker) or its deadline passes (one-shot). Before: the stop's
    killpg found no such group, its ProcessLookupError was swallowed, and the child went on to
    write its outputs (one-shot: the parent waited for it forever). Now the parent makes the
    group too, right after the fork, and falls back to the pid."""
    folder = pauses if run == "worker" else tmp_path
    reached = folder / "fork.reached"
    warm_up = action_params("stop_race", "warm_up", {"outputs": {"marker": "stop_race.warm"}})  # needs no torch
    try:
        if run == "worker":
            reached.unlink()  # arms the module worker's pause
            worker.send(warm_up)
            wait_until(reached.exists, 120, "the child never reached the pause")
            held = int(reached.read_text())
            newer = worker.send(warm_up)  # the same outputs
            wait_until(lambda: not is_running(held), 30, "the superseded child outlived its stop")
            response = worker.receive(timeout=120)
            assert response["requestId"] == newer and response["exitCode"] == 0, response
        else:
            proc = subprocess.Popen([sys.executable, MAIN, params_for("stop_race", "zoo.models:Tiny", deadline=2)],
                                    stderr=subprocess.PIPE, text=True, env={**os.environ, race_pause.VARIABLE: f"fork:{folder}"})
            wait_until(reached.exists, 120, "the child never reached the pause")
            held = int(reached.read_text())
            _, stderr = proc.communicate(timeout=60)  # before: it waited for the held child
            assert proc.returncode == 1 and "deadline of 2 s" in stderr, stderr
            assert not is_running(held)
    finally:
        (folder / "fork.go").write_text("")  # releases a child that outlived its stop
