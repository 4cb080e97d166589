"""Fast tests of exporter.driver.isolation and exporter.core.determinism: private caches, seeds, and network blocking.

Each case runs in a forked child, so that it cannot change this process's environment or
network namespace.
"""

import json
import os
import random
import socket
import tempfile

from exporter.core import determinism
from exporter.driver import isolation


def in_child(fn):
    """Runs fn() in a forked child; returns the string it returned (or its exception)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            result = fn()
        except BaseException as e:  # reported to the parent, which asserts on it
            result = f"child raised {e!r}"
        os.write(write_end, result.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read().decode()
    os.waitpid(pid, 0)
    return data


def test_private_cache_dir_takes_caches_temp_files_and_home_away_from_the_user(tmp_path):
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()

    def child():
        os.environ.update(HOME=str(home), TMPDIR=str(tmp))
        tempfile.tempdir = None
        root = isolation.private_cache_dir()
        names = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "TMPDIR")
        seen = {name: os.environ[name] for name in names}
        seen["~"] = os.path.expanduser("~")
        seen["tempfile"] = tempfile.mkdtemp()
        for path in seen.values():
            open(os.path.join(path, "written"), "w").close()
        isolation.remove_dir(root)
        import sys

        return json.dumps({"root": root, "seen": seen, "no_bytecode": sys.dont_write_bytecode})

    report = json.loads(in_child(child))
    for name, path in report["seen"].items():
        assert path.startswith(report["root"] + os.sep) or path == report["root"], name
    assert report["no_bytecode"]
    assert not os.path.exists(report["root"])
    assert os.listdir(home) == [] and os.listdir(tmp) == []  # everything went, and went away


def test_seed_everything_repeats_every_generator():
    import numpy
    import torch

    def draw():
        determinism.seed_everything()
        return random.random(), numpy.random.rand(), torch.rand(3).tolist()

    assert draw() == draw()


def _blocked_connection(port, uid=None):
    def child():
        import ctypes  # noqa: F401  (imported while its file is readable: see below)

        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # reachable before
        if uid is not None:  # after the imports: root's Python files may be unreadable to uid
            os.setgid(uid)
            os.setuid(uid)
        if not isolation.block_network():
            return "block_network() returned False"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        except OSError as e:
            return f"blocked: {e}"
        return "connected after block_network()"

    return in_child(child)


def test_block_network_stops_every_connection():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        assert _blocked_connection(server.getsockname()[1]).startswith("blocked:")


def test_block_network_works_for_an_unprivileged_process():
    """The worker may run as any user: then it needs a user namespace for the network one."""
    uid = 65534 if os.geteuid() == 0 else None  # as root, become `nobody` first
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        assert _blocked_connection(server.getsockname()[1], uid).startswith("blocked:")


def test_sweep_removes_the_private_folders_of_dead_runs_only(tmp_path):
    """A run killed by SIGKILL leaves its folder; the next worker's sweep removes it."""
    import signal
    import subprocess
    import sys

    code = ("import os, sys, tempfile; tempfile.tempdir = sys.argv[1]; from exporter.driver import isolation; "
            "print(isolation.private_cache_dir(), flush=True); os.kill(os.getpid(), 9)")
    killed = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert killed.returncode == -signal.SIGKILL
    dead = killed.stdout.strip()
    assert os.path.isdir(dead)

    def child():
        tempfile.tempdir = str(tmp_path)
        alive = isolation.private_cache_dir()  # held by this child while it sweeps
        removed = isolation.sweep_dead_private_dirs(str(tmp_path))
        return json.dumps({"removed": removed, "alive_kept": os.path.isdir(alive)})

    result = json.loads(in_child(child))
    assert result == {"removed": [dead], "alive_kept": True}
    assert not os.path.exists(dead)


def test_a_sweep_between_a_folder_s_lock_file_and_its_lock_spares_the_folder(tmp_path):
    """Bazel's warm-up starts two workers at once, and each sweeps as it starts. The run here is
    held (race_pause) after it created its folder's lock file and before it locked it. Before:
    that file was .owner itself, unlocked there, so the sweep took the folder for a dead run's
    and removed it under its owner. Now the file is locked first, then named .owner."""
    import subprocess
    import sys
    import time

    from exporter.driver import race_pause

    temp, pauses = tmp_path / "tmp", tmp_path / "pauses"
    temp.mkdir()
    pauses.mkdir()
    code = ("import sys, tempfile; tempfile.tempdir = sys.argv[1]; from exporter.driver import isolation; "
            "print(isolation.new_private_dir(), flush=True); sys.stdin.read()")  # held until stdin closes
    run = subprocess.Popen([sys.executable, "-c", code, str(temp)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path),
                                               **{race_pause.VARIABLE: f"owner_lock:{pauses}"}))
    try:
        end = time.monotonic() + 60
        while not (pauses / "owner_lock.reached").exists():
            assert time.monotonic() < end, "the run never reached the pause"
            time.sleep(0.01)
        (folder,) = os.listdir(temp)
        assert isolation.sweep_dead_private_dirs(str(temp)) == []
        (pauses / "owner_lock.go").write_text("")
        assert run.stdout.readline().strip() == str(temp / folder)
        assert os.listdir(temp / folder) == [".owner"]
        assert isolation.sweep_dead_private_dirs(str(temp)) == []  # locked: alive
    finally:
        (pauses / "owner_lock.go").write_text("")
        run.communicate(timeout=60)
    assert isolation.sweep_dead_private_dirs(str(temp)) == [str(temp / folder)]  # its owner is gone


def _refuse_unshare():
    """Makes the kernel refuse unshare(2) to this process and its children (EPERM), as the
    default seccomp profile of container runtimes does: no network namespace can be made."""
    import ctypes
    import platform

    number = {"x86_64": 272, "aarch64": 97}[platform.machine()]

    class Instruction(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                    ("k", ctypes.c_uint32)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(Instruction))]

    code = (Instruction * 4)(
        Instruction(0x20, 0, 0, 0),  # load the syscall number
        Instruction(0x15, 0, 1, number),  # unshare?
        Instruction(0x06, 0, 0, 0x00050000 | 1),  # then fail with EPERM
        Instruction(0x06, 0, 0, 0x7FFF0000),  # else allow
    )
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
    program = Program(len(code), code)
    assert libc.prctl(22, 2, ctypes.byref(program), 0, 0) == 0  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER


def test_an_action_that_ran_with_network_says_so_in_its_log_and_manifest(tmp_path):
    """Where no network namespace can be made and no sandbox blocked the network, the action
    runs with network: its log says so in one line, and its manifest records it."""
    from exporter.driver import request, worker_child

    assert isolation.network_interfaces(), "this test needs a machine with a network interface"
    (tmp_path / "zoo").mkdir()
    (tmp_path / "zoo" / "__init__.py").write_text("")
    (tmp_path / "zoo" / "tiny.py").write_text(
        "import torch\n\nclass Tiny(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n")
    (tmp_path / "identity.txt").write_text("python 3.11.7\n")
    spec = {"inputs": [{"name": "x", "value": {"tensor": {"shape": [2], "dtype": "float32"}}}], "dims": {}}

    def export(name, refuse):
        def child():
            os.chdir(tmp_path)
            if refuse:
                _refuse_unshare()
            config = {"label": f"//zoo:{name}", "identity": "identity.txt", "spec_label": "//zoo:spec", "spec": spec,
                      "model": {"label": "//zoo:tiny", "entry": "zoo.tiny:Tiny", "srcs": ["zoo/tiny.py"],
                                "import_roots": ["."]},
                      "outputs": {"pt2": f"{name}/t.pt2", "manifest": f"{name}/t.pt2.json", "log": f"{name}/t.log"}}
            os.makedirs(name)
            (tmp_path / f"{name}.json").write_text(json.dumps(config))
            code, text = worker_child.run_one_shot(["export", f"{name}.json"])
            return json.dumps([code, text])

        code, text = json.loads(in_child(child))
        assert code == 0, text
        return json.loads((tmp_path / name / "t.pt2.json").read_text()), (tmp_path / name / "t.log").read_text()

    open_manifest, open_log = export("open", refuse=True)
    closed_manifest, closed_log = export("closed", refuse=False)
    assert open_manifest["network"] == "not blocked"
    assert [line for line in open_log.splitlines() if "network" in line] == [
        f"rules_torch_export: {request.NETWORK_NOT_BLOCKED}"]
    assert "network" not in closed_manifest and "network" not in closed_log
    assert (tmp_path / "open" / "t.pt2").read_bytes() == (tmp_path / "closed" / "t.pt2").read_bytes()


def test_the_read_only_view_works_for_an_unprivileged_process():
    """The worker may run as any user: then the child enters its mount namespace inside a user
    namespace (driver/namespaces.py); its outputs' folder stays writable, the rest is not."""
    import errno
    import shutil

    base = tempfile.mkdtemp(dir="/tmp")  # reachable by `nobody`, unlike the test's own folder
    allowed, other = os.path.join(base, "outputs"), os.path.join(base, "sources")
    for folder in (base, allowed, other):
        os.makedirs(folder, exist_ok=True)
        os.chmod(folder, 0o777)

    def child():
        import ctypes  # noqa: F401  (imported while its file is readable, as above)

        if os.geteuid() == 0:
            os.setgid(65534)
            os.setuid(65534)
        gaps = isolation.contain([allowed])
        written = []
        for folder in (allowed, other):
            try:
                open(os.path.join(folder, "x"), "w").close()
                written.append("written")
            except OSError as e:
                written.append(errno.errorcode[e.errno])
        return json.dumps([gaps, written])

    try:
        assert json.loads(in_child(child)) == [[], ["written", "EROFS"]]
        assert os.listdir(other) == []
    finally:
        shutil.rmtree(base)
