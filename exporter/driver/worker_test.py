"""The persistent worker, driven as Bazel 4.2.3 drives it: over protobuf, its default protocol (and
over JSON, the other one)."""

import json
import os
import pathlib
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest
from runfiles import Runfiles

from exporter.driver import race_pause, work_protocol
from exporter.driver.worker import WARM_UP_LOG_PREFIX
from exporter.formats import pte_inspect
from exporter.tests.worker_harness import (MAIN, SPEC, Worker, action_params, adopt_orphans, children_of,
                                           descendants, every_file, is_running, one_shot, params_for, wait_until)

MODELS = textwrap.dedent(
    """
    import os, signal, sys
    import torch

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 3)

        def forward(self, x):
            return torch.relu(self.linear(x))

    def polluter():
        # Global state that must not leak into later requests.
        torch.set_default_dtype(torch.float64)
        torch.library.define("leaky::op", "(Tensor x) -> Tensor")
        return Tiny()

    def checker():
        assert torch.get_default_dtype() == torch.float32, "default dtype leaked"
        assert not hasattr(torch.ops.leaky, "op"), "custom op leaked"
        assert "zoo.slow" not in sys.modules, "module leaked"
        return Tiny()

    def parallel():
        # Large enough for torch to use its OpenMP pool, which hangs in a child forked from a
        # parent that had started that pool.
        big = torch.randn(2048, 2048)
        (big @ big).clone().sum()
        return Tiny()

    def segfault():
        os.kill(os.getpid(), signal.SIGSEGV)

    class CrashesWhenTraced(torch.nn.Module):
        def forward(self, x):
            os.kill(os.getpid(), signal.SIGSEGV)
            return x

    def exits():
        sys.exit(3)

    def hard_exit():
        os._exit(7)

    def wanders():
        # Model code that changes folders: the outputs must still land where Bazel expects them.
        os.chdir("/")
        return Tiny()

    def hangs():
        import subprocess, time
        subprocess.Popen(["sleep", "313"])  # started by the model: the deadline stops it too
        time.sleep(300)
    """
)

USES_HELPER = "from zoo.helper import Tiny\n"
HELPER = "from zoo.models import Tiny\n"

SLOW = "import time\ntime.sleep(30)\nfrom zoo.models import Tiny\n"

# Waits until the test writes the marker `go` beside zoo/ (its folder, as the sandbox tests' models do).
WAITS_FOR_GO = textwrap.dedent(
    """
    import pathlib, time
    go = pathlib.Path(__file__).resolve().parents[1] / "go"
    for _ in range(6000):  # 300 s at most
        if go.exists():
            break
        time.sleep(0.05)
    from zoo.models import Tiny
    """
)

# The warm-up of a worker (--warm) in tests where it plays no part: that of Bazel's export worker
# (which export requests go to; a third of the lowering warm-up), or none (bundle has no worker).
EXPORT, NO_WARM_UP = "export", "bundle"


@pytest.fixture(scope="module", autouse=True)
def own_orphans():
    """Processes that outlive what started them stay below this test, for descendants()."""
    adopt_orphans()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("work")
    (tmp_path / "zoo").mkdir()
    (tmp_path / "zoo" / "__init__.py").write_text("")
    (tmp_path / "zoo" / "models.py").write_text(MODELS)
    (tmp_path / "zoo" / "slow.py").write_text(SLOW)
    (tmp_path / "zoo" / "uses_helper.py").write_text(USES_HELPER)
    (tmp_path / "zoo" / "helper.py").write_text(HELPER)
    (tmp_path / "identity.txt").write_text("python 3.11.7\ntorch==2.13.0+cpu\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(old)


def _warm_up_params(name):
    with open(f"{name}.json", "w") as f:
        json.dump({"label": "//rules/private:lower_warm_up", "outputs": {"marker": f"{name}.warm"}}, f)
    with open(f"{name}.params", "w") as f:
        f.write(f"warm_up\n{name}.json\n")
    return f"@{name}.params"


# What the module's worker answered to its first requests, and how long its exports took.
WARM_UP: dict = {}


@pytest.fixture(scope="module")
def pauses():
    """The folder of the module worker's pause as a lowering starts (race_pause), in /dev/shm,
    which a request's child may write. Disarmed (its .reached file exists) but while
    test_a_crash_names_its_phase_and_the_command_that_runs_it_again's lowering row holds a request."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="rules_torch_export_test_", dir="/dev/shm"))
    (folder / "phase-lowering.reached").write_text("")
    yield folder
    shutil.rmtree(folder)


@pytest.fixture(scope="module")
def worker(workdir, pauses):
    """One worker for the module: sharing it is itself a test of request isolation. Its first
    requests are a build's: the warm-up action's, then two exports, timed (in WARM_UP, for
    test_a_warm_up_request_is_answered_once_the_worker_is_warm)."""
    w = Worker(env={race_pause.VARIABLE: f"phase-lowering:{pauses}"})
    warm_up = w.request(_warm_up_params("first"))
    started = time.monotonic()
    after_warm_up = w.request(params_for("after_warm_up", "zoo.models:Tiny"))
    warm_export = time.monotonic() - started
    started = time.monotonic()
    again = w.request(params_for("again", "zoo.models:Tiny"))
    WARM_UP.update(responses=[warm_up, after_warm_up, again], after_warm_up_s=warm_export,
                   again_s=time.monotonic() - started)
    yield w
    if w.proc.poll() is None:
        w.close()


@pytest.fixture(scope="module")
def one_shot_same(workdir):
    """The bytes of a one-shot export of //zoo:same (.pt2, manifest), which the worker's, over
    either protocol, must equal; its outputs are removed, for the workers to write afresh."""
    assert one_shot(params_for("same", "zoo.models:Tiny")).returncode == 0
    outputs = (workdir / "same.pt2", workdir / "same.pt2.json")
    written = tuple(path.read_bytes() for path in outputs)
    for path in outputs:
        path.unlink()
    return written


def test_worker_and_one_shot_write_identical_bytes(worker, workdir, one_shot_same):
    assert worker.request(params_for("same", "zoo.models:Tiny"))["exitCode"] == 0
    from_worker = (workdir / "same.pt2").read_bytes(), (workdir / "same.pt2.json").read_bytes()
    assert from_worker == one_shot_same


def test_children_run_parallel_torch_code(worker):
    response = worker.request(params_for("parallel", "zoo.models:parallel"))
    assert response["exitCode"] == 0, response["output"]


def test_global_state_does_not_leak_between_requests(worker):
    assert worker.request(params_for("p", "zoo.models:polluter"))["exitCode"] == 0
    response = worker.request(params_for("c", "zoo.models:checker"))
    assert response["exitCode"] == 0, response["output"]


@pytest.mark.parametrize(
    "entry, needle",
    [("zoo.models:segfault", "SIGSEGV"), ("zoo.models:hard_exit", "status 7"), ("zoo.models:exits", "SystemExit")],
)
def test_a_crashing_model_fails_only_its_own_target(worker, workdir, entry, needle):
    response = worker.request(params_for("crash", entry))
    assert response["exitCode"] == 1
    assert response["output"].startswith("ERROR: //zoo:crash: ")
    assert needle in response["output"]
    if needle != "SystemExit":  # a crash of the process: the hint names the one-shot strategy for
        # this action's mnemonic (actions/registry.py)
        assert "--strategy=TorchExport=sandboxed`" in response["output"]
    assert not (workdir / "crash.pt2").exists()
    assert worker.request(params_for("after", "zoo.models:Tiny"))["exitCode"] == 0


def test_killed_worker_leaves_no_output_and_a_new_worker_succeeds(workdir):
    killed = Worker(warm=NO_WARM_UP)
    params = params_for("victim", "zoo.slow:Tiny")
    killed.send(params)
    # The forked child that runs the model.
    wait_until(lambda: children_of(killed.proc.pid), 300, "the worker never forked a child")
    (child,) = children_of(killed.proc.pid)
    killed.proc.send_signal(signal.SIGKILL)
    killed.proc.wait(timeout=30)
    # The child died with its parent (it would otherwise be re-parented and keep running).
    wait_until(lambda: not is_running(child), 10, "the worker's child outlived it")
    assert not (workdir / "victim.pt2").exists()
    (workdir / "zoo" / "slow.py").write_text("from zoo.models import Tiny\n")
    retry = Worker(warm=NO_WARM_UP)
    try:
        assert retry.request(params)["exitCode"] == 0
        assert (workdir / "victim.pt2").exists()
        # The killed worker could not remove its private output folder; the next request there did.
        assert not list(workdir.glob(".rules_torch_export-*"))
    finally:
        retry.close()


def test_memory_stays_bounded_over_50_requests(worker):
    worker.request(params_for("warm", "zoo.models:Tiny"))
    before = worker.rss_kib()
    for i in range(50):
        assert worker.request(params_for(f"m{i % 2}", "zoo.models:Tiny"))["exitCode"] == 0
    growth_mib = (worker.rss_kib() - before) / 1024
    print(f"worker RSS growth over 50 requests: {growth_mib:.1f} MiB (from {before / 1024:.0f} MiB)")
    assert growth_mib < 32


def test_edited_exporter_code_is_not_served_stale(workdir):
    """Bazel 4.2.3 reuses a worker after its tool files change; the worker must notice."""
    copy = workdir / "exporter_copy"
    shutil.copytree(os.path.dirname(MAIN), copy / "exporter")
    w = Worker(main=str(copy / "exporter" / "main.py"), warm=NO_WARM_UP)
    try:
        assert w.request(params_for("before_edit", "zoo.models:Tiny"))["exitCode"] == 0
        export_py = copy / "exporter" / "actions" / "export.py"
        export_py.write_text(export_py.read_text().replace(
            '"format": "rules_torch_export/pt2-manifest/1"', '"format": "edited"'))
        # Two requests at once: both reach the restarted worker, which runs the edited code.
        first = w.send(params_for("after_edit", "zoo.models:Tiny"))
        second = w.send(params_for("after_edit2", "zoo.models:Tiny"))
        responses = {r["requestId"]: r for r in (w.receive(), w.receive())}
        assert sorted(responses) == [first, second]
        assert all(r["exitCode"] == 0 for r in responses.values()), responses
        for name in ("after_edit", "after_edit2"):
            assert json.loads((workdir / f"{name}.pt2.json").read_text())["format"] == "edited"
        assert w.proc.poll() is None, "the worker restarts in place; Bazel keeps talking to it"
    finally:
        if w.proc.poll() is None:
            w.close()


def test_concurrent_requests_each_get_their_own_answer(worker, workdir):
    """Bazel multiplexes concurrent actions into one worker: a slow request must not hold up a
    fast one, a crash must fail only its own request, and each answer carries its requestId."""
    (workdir / "zoo" / "sleepy.py").write_text(WAITS_FOR_GO)
    slow = worker.send(params_for("sleepy", "zoo.sleepy:Tiny"))
    crash = worker.send(params_for("crash2", "zoo.models:segfault"))
    fast = worker.send(params_for("fast", "zoo.models:Tiny"))
    order = [worker.receive() for _ in range(2)]  # the slow one waits for them: never answered here
    (workdir / "go").write_text("")
    order.append(worker.receive())
    by_id = {r["requestId"]: r for r in order}
    assert order[-1]["requestId"] == slow, [r["requestId"] for r in order]
    assert by_id[fast]["exitCode"] == 0 and by_id[slow]["exitCode"] == 0, by_id
    assert by_id[crash]["exitCode"] == 1 and "SIGSEGV" in by_id[crash]["output"]
    assert (workdir / "fast.pt2").exists() and (workdir / "sleepy.pt2").exists()


def test_the_json_protocol_gives_the_same_answers(workdir, one_shot_same):
    """A toolchain may ask Bazel for JSON (requires-worker-protocol=json): the worker tells it
    from the first request and answers in JSON lines, with the same bytes and isolation."""
    w = Worker(protocol=work_protocol.JSON, warm=EXPORT)
    try:
        assert w.request(params_for("same", "zoo.models:Tiny"))["exitCode"] == 0
        from_worker = (workdir / "same.pt2").read_bytes()
        assert from_worker == one_shot_same[0]
        crash = w.send(params_for("json_crash", "zoo.models:segfault"))
        fine = w.send(params_for("json_fine", "zoo.models:Tiny"))
        by_id = {r["requestId"]: r for r in (w.receive(), w.receive())}
        assert by_id[crash]["exitCode"] == 1 and "SIGSEGV" in by_id[crash]["output"]
        assert by_id[fine]["exitCode"] == 0, by_id[fine]["output"]
    finally:
        w.close()


def test_a_warm_up_request_is_answered_once_the_worker_is_warm(worker, workdir):
    """The warm-up action (rules/private/lib/warm_up.bzl) ends when its worker has warmed up; its
    marker is the same bytes from a worker and one-shot, and one-shot it imports no torch. (The
    module's worker got the warm-up request first, then two exports: see its fixture.)"""
    warm_up, after_warm_up, again = WARM_UP["responses"]
    assert warm_up["exitCode"] == 0
    assert (workdir / "first.warm").read_bytes() == b"warm\n"
    # Answered after the warm-up: an export right after it is as fast as a warm one.
    assert after_warm_up["exitCode"] == 0
    warm_export = WARM_UP["after_warm_up_s"]
    assert again["exitCode"] == 0
    assert warm_export < 3 * WARM_UP["again_s"] + 1.0, warm_export
    probe = subprocess.run(
        [sys.executable, "-c", "import runpy, sys; sys.argv = sys.argv[1:]; "
         "runpy.run_path(sys.argv[0], run_name='__main__')", MAIN, _warm_up_params("one_shot")],
        capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0",
                                             "PYTHONPROFILEIMPORTTIME": "1"}, timeout=120)
    assert probe.returncode == 0, probe.stderr
    assert (workdir / "one_shot.warm").read_bytes() == b"warm\n"
    assert "| torch\n" not in probe.stderr, "a one-shot warm-up request imported torch"


def declared(name, *sources):
    """The inputs Bazel would list for an export of the given model sources."""
    return ["identity.txt", f"{name}.json", "zoo/__init__.py", *sources]


def test_an_undeclared_import_fails_as_in_the_sandbox(worker, workdir):
    """A request runs in a folder of its declared inputs: a module the target did not declare is
    missing, and the one line names the module, its file and the target to add it to."""
    params = params_for("undeclared", "zoo.uses_helper:Tiny")
    response = worker.request(params, declared("undeclared", "zoo/uses_helper.py", "zoo/models.py"))
    assert response["exitCode"] == 1
    lines = response["output"].splitlines()
    assert lines[0] == ("ERROR: //zoo:undeclared: torch_model //zoo:model imports 'zoo.helper', which is "
                        "zoo/helper.py, but that file is not in its srcs or deps; add \"helper.py\" to the "
                        "`srcs` of //zoo:model (or the target that has it to `deps`)"), lines
    assert not (workdir / "undeclared.pt2").exists()
    inputs = declared("undeclared", "zoo/uses_helper.py", "zoo/helper.py", "zoo/models.py")
    assert worker.request(params, inputs)["exitCode"] == 0
    assert (workdir / "undeclared.pt2").exists()  # outputs go to the real folder, not the private one


def test_model_code_that_changes_folders_writes_where_bazel_expects(worker, workdir):
    for run in ("worker", "one-shot"):
        params = params_for(f"wanders_{run.replace('-', '_')}", "zoo.models:wanders")
        if run == "worker":
            assert worker.request(params)["exitCode"] == 0
        else:
            assert one_shot(params).returncode == 0
        assert (workdir / f"wanders_{run.replace('-', '_')}.pt2").exists()


@pytest.mark.parametrize("run", ["worker", "one-shot"])
def test_a_request_past_its_deadline_is_stopped_in_one_line(worker, workdir, run):
    params = params_for("hangs", "zoo.models:hangs", deadline=5)
    started = time.monotonic()
    if run == "worker":
        response = worker.request(params)
        code, output = response["exitCode"], response["output"]
    else:
        done = one_shot(params)
        code, output = done.returncode, done.stderr
    assert time.monotonic() - started < 60
    assert code == 1
    assert output.splitlines() == [
        "ERROR: //zoo:hangs: the exporter ran past this action's deadline of 5 s and was stopped; if the "
        "target needs longer, set `deadline = <seconds>` on //zoo:hangs or pass "
        "--@rules_torch_export//rules:exporter_deadline=<seconds>"]
    wait_until(lambda: b"sleep\0313\0" not in descendants().values(), 10,
               "what the model started outlived the deadline")
    assert not (workdir / "hangs.pt2").exists()


def test_a_newer_request_for_the_same_outputs_stops_the_old_one(worker, workdir):
    """After Ctrl-C, Bazel 4.2.3 leaves a request running in the worker; the next build sends the
    same action again. The old request must not write over (or clean up) the new outputs."""
    (workdir / "zoo" / "stale.py").write_text("import time\ntime.sleep(60)\nfrom zoo.models import Tiny\n")
    old = worker.send(params_for("twice", "zoo.stale:Tiny"))
    wait_until(lambda: children_of(worker.proc.pid), 120, "the worker never forked a child")
    (stale_child,) = children_of(worker.proc.pid)
    new = worker.send(params_for("twice", "zoo.models:Tiny"))
    response = worker.receive(timeout=50)
    # The old request gets no answer: Bazel no longer waits for it, and may reuse its id.
    assert response["requestId"] == new and response["exitCode"] == 0, (old, response)
    assert (workdir / "twice.pt2").exists()
    assert not is_running(int(stale_child))


def test_malformed_requests_are_answered_and_the_worker_keeps_serving(workdir):
    w = Worker(warm=NO_WARM_UP)
    try:
        w.stdin.write(b"\x05\x0a\x03\xff\xfe\x41")  # an argument that is not UTF-8
        w.stdin.flush()
        bad = w.receive()
        assert bad["exitCode"] == 1 and "malformed WorkRequest" in bad["output"], bad
        assert w.request(params_for("after_garbage", "zoo.models:Tiny"))["exitCode"] == 0
    finally:
        w.close()


def test_a_toolchain_change_restarts_a_warm_worker(workdir):
    """The identity file is an input, not part of the worker's key: Bazel keeps a warm worker
    after a lock change. The worker sees the new identity and restarts before running it."""
    log_path = workdir / "toolchain_worker.log"
    identity = workdir / "identity.txt"
    original = identity.read_text()
    with open(log_path, "wb") as log:
        w = Worker(log=log, warm=NO_WARM_UP)
        try:
            assert w.request(params_for("before_lock", "zoo.models:Tiny"))["exitCode"] == 0
            identity.write_text(original + "einops==0.8.1\n")
            assert w.request(params_for("after_lock", "zoo.models:Tiny"))["exitCode"] == 0
            assert w.request(params_for("after_lock2", "zoo.models:Tiny"))["exitCode"] == 0
            assert w.proc.poll() is None, "the worker restarts in place; Bazel keeps talking to it"
        finally:
            identity.write_text(original)
            w.close()
    warm_ups = [line for line in log_path.read_text().splitlines() if line.startswith(WARM_UP_LOG_PREFIX)]
    assert len(warm_ups) == 2, warm_ups  # started, then restarted once for the new toolchain


def test_requests_pending_at_a_restart_survive_it_whatever_their_size(workdir):
    """A restart hands the requests read but not started to its successor in a memory file: a
    request that declares a package tree (an ExecuTorch release's) lists more input paths than one
    environment string holds (128 KiB), and execve refused it (E2BIG): the worker died."""
    identity = workdir / "identity.txt"
    original = identity.read_text()
    w = Worker(warm=NO_WARM_UP)
    try:
        assert w.request(params_for("before_many", "zoo.models:Tiny"))["exitCode"] == 0
        identity.write_text(original + "einops==0.8.1\n")
        params = params_for("after_many", "zoo.models:Tiny")
        many = every_file() + [f"release/site-packages/package_{i:05d}/" + "m" * 40 + ".py" for i in range(4000)]
        response = w.request(params, inputs=many)
        assert response["exitCode"] == 0, response.get("output")
        assert w.proc.poll() is None, "the worker restarted in place"
    finally:
        identity.write_text(original)
        w.close()


def _crafted(pte):
    """The program with a kernel call's operator index out of range: ExecuTorch's Python runtime
    calls past its kernel table and dies by SIGSEGV (the native runner refuses it first)."""
    plan = pte_inspect.read_program(pte).execution_plan[0]
    for instruction in plan.chains[0].instructions:
        call = instruction.instr_args
        if call is not None and call.table_name == "KernelCall" and call.op_index > 0:  # 0 is not stored
            out = bytearray(pte)
            struct.pack_into("<i", out, call._field(0), 999)
            return bytes(out)
    raise AssertionError("no kernel call")


def _lowering(name):
    """The params of //zoo:<name>, a lowering of //zoo:phase_ep to the portable runtime."""
    return action_params(name, "lower", {
        "exported_label": "//zoo:phase_ep", "pt2": "phase_ep.pt2", "spec_label": "//zoo:spec", "spec": SPEC,
        "backends": [], "outputs": {"pte": f"{name}.pte", "manifest": f"{name}.pte.json"}})


@pytest.fixture(scope="module")
def tiny_program(worker, workdir):
    """Tiny exported (//zoo:phase_ep) and lowered to the portable runtime (phase.pte), and that
    program crafted to crash the runtime (crafted.pte)."""
    assert worker.request(params_for("phase_ep", "zoo.models:Tiny"))["exitCode"] == 0
    response = worker.request(_lowering("phase"))
    assert response["exitCode"] == 0, response["output"]
    (workdir / "crafted.pte").write_bytes(_crafted((workdir / "phase.pte").read_bytes()))


def _numerics_of_crafted(name):
    return action_params(name, "numerics_values", {
        "pte": "crafted.pte", "pt2": "phase_ep.pt2", "pt2_manifest": "phase_ep.pt2.json", "exported_label":
        "//zoo:phase_ep", "spec": SPEC, "reference": "exported",
        "outputs": {"values": f"{name}.values.json", "data": f"{name}.values.etvals"}})


def _rerun(name, mnemonic):
    return f"reproduce it outside the worker with `bazel build //zoo:{name} --strategy={mnemonic}=sandboxed`"


# phase: (the request's params for //zoo:<name>, the line after "ERROR: //zoo:<name>: the exporter
# process "). The lowering is killed from outside as the OOM killer would (SIGKILL), while held
# in its first instruction (race_pause): nothing a model can do reaches the lowering's code.
PHASES = {
    "model": (lambda name: params_for(name, "zoo.models:segfault"), lambda name: (
        f"was killed by signal SIGSEGV while running the code of torch_model //zoo:model; the crash is in the "
        f"model or an op it calls: {_rerun(name, 'TorchExport')}")),
    "export": (lambda name: params_for(name, "zoo.models:CrashesWhenTraced"), lambda name: (
        f"was killed by signal SIGSEGV while torch.export traced torch_model //zoo:model; the crash is in "
        f"torch.export or an op the model calls as it is traced: {_rerun(name, 'TorchExport')}")),
    "lowering": (_lowering, lambda name: (
        f"was killed by signal SIGKILL (out of memory?) while ExecuTorch lowered the program (backends: "
        f"portable); the crash is in ExecuTorch's lowering or a backend's partitioner or compiler, not in the "
        f"model's code: {_rerun(name, 'ExecuTorchLower')}")),
    "runtime": (_numerics_of_crafted, lambda name: (
        f"was killed by signal SIGSEGV while ExecuTorch's runtime ran method forward of crafted.pte; the crash "
        f"is in the runtime, or in a kernel or delegate the program calls, not in the model's code: "
        f"{_rerun(name, 'NumericsValues')}; run the program alone in the native runtime, which checks it before "
        f"it runs it, with `bazel run @rules_torch_export//native:et_runner -- $PWD/crafted.pte --call forward`")),
}


def _crash(params, run, worker):
    """(exit code, output) of a request that crashes by itself."""
    if run == "worker":
        response = worker.request(params)
        return response["exitCode"], response["output"]
    done = one_shot(params)
    return done.returncode, done.stderr


def _killed_in_its_lowering(params, run, worker, pauses):
    """(exit code, output) of a request killed by SIGKILL as its lowering starts, where it is held
    (race_pause): in the module's worker, whose pause this arms, or one-shot."""
    if run == "worker":
        (pauses / "phase-lowering.reached").unlink()  # arms the pause
        worker.send(params)
    else:
        pauses = pathlib.Path(tempfile.mkdtemp(prefix="rules_torch_export_test_", dir="/dev/shm"))
        process = subprocess.Popen([sys.executable, MAIN, params], stderr=subprocess.PIPE, text=True,
                                   env={**os.environ, "PYTHONHASHSEED": "0", race_pause.VARIABLE: f"phase-lowering:{pauses}"})
    reached = pauses / "phase-lowering.reached"
    wait_until(reached.exists, 120, "the lowering never started")
    os.kill(int(reached.read_text()), signal.SIGKILL)
    if run == "worker":
        response = worker.receive()
        return response["exitCode"], response["output"]
    _, stderr = process.communicate(timeout=60)
    shutil.rmtree(pauses)
    return process.returncode, stderr


# Every build runs each phase in the worker and the model's one-shot too; the other one-shot
# rows (the same child, forked by the one-shot process: what --config=noworker runs) are
# worker_nightly_test's: each pays a cold import of torch and ExecuTorch, 8 to 14 s.
CRASH_ROWS = [pytest.param(phase, run, id=f"{phase}-{run}" + ("-nightly" if run == "one-shot" and phase != "model" else ""))
              for phase in sorted(PHASES) for run in ("worker", "one-shot")]


@pytest.mark.parametrize("phase, run", CRASH_ROWS)
def test_a_crash_names_its_phase_and_the_command_that_runs_it_again(worker, workdir, tiny_program, pauses, phase, run):
    """Before: every crash read "while running this target's model code; the crash is in the model
    or an op it calls", also ExecuTorch's runtime's inside a NumericsValues action."""
    name = f"crash_{phase}_{run.replace('-', '_')}"
    params, line = PHASES[phase]
    if phase == "lowering":
        code, output = _killed_in_its_lowering(params(name), run, worker, pauses)
    else:
        code, output = _crash(params(name), run, worker)
    assert code == 1
    assert output.splitlines() == [f"ERROR: //zoo:{name}: the exporter process {line(name)}"]
    assert sorted(p.name for p in workdir.glob(f"{name}.*")) == [f"{name}.json", f"{name}.params"]  # no output


def test_the_runtime_s_command_explains_the_crash(tiny_program, workdir):
    """The native runner the runtime's line names checks the program first: one line, no crash."""
    runner = Runfiles.Create().Rlocation("rules_torch_export/native/et_runner")
    done = subprocess.run([runner, str(workdir / "crafted.pte"), "--call", "forward"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1
    assert 'corrupt program: method "forward" calls operator 999 of 3' in done.stderr, done.stderr


def _cancel(request_id, protocol):
    """A cancel request, as Bazel writes it (request_id < 128)."""
    if protocol == work_protocol.JSON:
        return json.dumps({"requestId": request_id, "cancel": True}).encode()  # no newline, as Bazel 4.2.3
    return bytes([4, 0x18, request_id, 0x20, 1])  # 4 bytes: request_id (field 3), cancel (field 4) true


@pytest.mark.parametrize("protocol", [work_protocol.PROTO, work_protocol.JSON])
def test_a_cancelled_request_is_stopped_and_answered_once(workdir, tmp_path, protocol):
    """Bazel's cancellation (`supports-worker-cancellation` and --experimental_worker_cancellation),
    as a hand-written request stream: the request is held right after its fork (race_pause),
    then cancelled; a cancel of an id the worker does not run gets no answer. Before: `cancel`
    was parsed and ignored, and the worker answered the cancel request itself with an error
    ("lists no inputs"): a second answer to one request id, while the request ran on."""
    w = Worker(warm=NO_WARM_UP, protocol=protocol, env={race_pause.VARIABLE: f"fork:{tmp_path}"})
    try:
        cancelled = w.send(_warm_up_params("cancelled"))  # a request that needs no torch: cheap
        wait_until((tmp_path / "fork.reached").exists, 120, "the request never reached the pause")
        held = int((tmp_path / "fork.reached").read_text())
        w.stdin.write(_cancel(cancelled, protocol) + _cancel(99, protocol))
        w.stdin.flush()
        assert w.receive() == {"exitCode": 0, "output": "", "requestId": cancelled, "wasCancelled": True}
        wait_until(lambda: not is_running(held), 30, "the cancelled request ran on")
        after = w.send(_warm_up_params("after_cancel"))
        response = w.receive()  # the next answer is this request's: none for id 99, none twice
        assert response["requestId"] == after and response["exitCode"] == 0, response
        assert not (workdir / "cancelled.warm").exists() and (workdir / "after_cancel.warm").exists()
    finally:
        (tmp_path / "fork.go").write_text("")
        w.close()
