"""Runs the real Bazel in temporary copies of this repository, for end-to-end tests.

Use it from an `e2e_test` (tools/pytest/e2e_test.bzl), which tags the test E2E_TAGS ("e2e",
"external", "local"; e2e_test.bzl says why each) and depends on this library:

    from tests.e2e import harness

    def test_export_runs_once():
        with harness.Workspace.create("a") as ws:     # copy of the repo under TEST_TMPDIR
            ws.write("zoo/BUILD", '...')               # the test's own tiny models
            result = ws.bazel("build", "//zoo:all")    # execution log parsed into spawns
            assert result.code == 0, result.stderr
            assert len(result.executed("TorchExport")) == 1
            digest = ws.sha256("bazel-bin/zoo/mlp_ep.pt2")

Each Workspace has its own output base, so several may build side by side; reuse one workspace
across test cases (a module-scoped fixture) to keep the Bazel server and its caches warm. The
inner builds reuse the venv the test itself runs on (RULES_TORCH_EXPORT_REUSE_VENV), so they
never install torch. Workspace.example("examples/consumer") copies the rules with an example
workspace that has a WORKSPACE of its own, and runs Bazel in it. Also here:
Workspace.replay() re-runs one logged spawn in a folder that holds only its declared inputs;
Result.executed()/cache_hits()/labels()/tests_run() read the execution log.
nginx_cache.NginxCache is a real HTTP remote cache (local_server: a free port, waiting until a
server listens, stopping it); network_probe's model dials a local listener; zoo_workspace
installs the tiny model zoo in tests/e2e/zoo.
"""

import atexit
import functools
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from exporter.core.manifest import sha256_file  # noqa: F401  (tests call harness.sha256_file)

# What a workspace needs to build the rules: the root files and the rule, toolchain and
# exporter trees. models/, examples/ and tests/ stay out, so `//...` in a copy means the
# test's own packages plus this infrastructure.
DEFAULT_INCLUDE = (
    ".bazelrc",
    ".bazelversion",
    "BUILD",
    "WORKSPACE",
    "backend_hooks",
    "bazelw",
    "exporter",
    "native",
    "platforms",
    "rules",
    "third_party",
    "toolchain",
    "tools",
)

# Never copied: Bazel's convenience symlinks, personal settings, VCS data, Python caches.
_SKIP_NAMES = ("user.bazelrc", ".git", "__pycache__")

BAZEL_TIMEOUT = 1200

# Execution logs are numbered across all workspaces of this process, so none overwrites another.
_LOG_NUMBERS = itertools.count(1)


def source_root():
    """The source tree this file belongs to (runfiles symlinks resolved)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    if not os.path.exists(os.path.join(root, "WORKSPACE")):
        raise RuntimeError(f"harness: no WORKSPACE at {root}; is harness.py in tests/e2e?")
    return root


def bazel_binary():
    """The real Bazel 4.2.3, found the way ./bazelw finds it."""
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/bin", "/usr/local/bin"])
    for name in ("bazel-4.2.3", "bazel-4"):
        found = shutil.which(name, path=path)
        if found:
            return found
    raise RuntimeError("harness: no bazel-4 on PATH; run ./bazelw once to install bazel-bootstrap")


def outer_venv():
    """The venv this test runs on: inner builds reuse it instead of installing torch."""
    return os.path.realpath(sys.prefix)


@functools.lru_cache(maxsize=None)
def scratch_dir():
    """A folder for workspaces and output bases: TEST_TMPDIR under `bazel test`.

    Run directly (plain pytest), the harness makes a temp folder and removes it at exit,
    unless RULES_TORCH_EXPORT_E2E_KEEP=1 keeps it for a look.
    """
    if os.environ.get("TEST_TMPDIR"):
        return os.environ["TEST_TMPDIR"]
    path = tempfile.mkdtemp(prefix="rules_torch_export_e2e_")
    if not os.environ.get("RULES_TORCH_EXPORT_E2E_KEEP"):
        atexit.register(shutil.rmtree, path, True)
    return path


def _source_files(root, include):
    """Relative paths of the files to copy: tracked plus untracked-but-not-ignored ones."""
    if os.path.isdir(os.path.join(root, ".git")) and shutil.which("git"):
        listed = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard",
             "--", *include],
            check=True,
            capture_output=True,
        ).stdout.decode()
        files = [p for p in listed.split("\0") if p]
    else:
        files = []
        for top in include:
            path = os.path.join(root, top)
            if os.path.isfile(path):
                files.append(top)
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = [d for d in dirnames if d not in _SKIP_NAMES]
                rel = os.path.relpath(dirpath, root)
                files.extend(os.path.join(rel, f) for f in filenames)
    return sorted(
        p for p in files
        if not any(part in _SKIP_NAMES or part.startswith("bazel-") for part in p.split("/"))
        and os.path.isfile(os.path.join(root, p))  # deleted-but-tracked files are skipped
    )


def copy_sources(dest, include=DEFAULT_INCLUDE, root=None):
    """Copies the repository's sources (as `git ls-files` sees them) into dest."""
    root = root or source_root()
    for rel in _source_files(root, include):
        target = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(root, rel), target)


_snapshots = {}


def snapshot(include=DEFAULT_INCLUDE):
    """A copy of the sources taken once per test process; workspaces are copied from it.

    Every workspace of a test then holds the same bytes, even while someone edits the tree.
    """
    key = tuple(include)
    if key not in _snapshots:
        path = tempfile.mkdtemp(prefix="sources_", dir=scratch_dir())
        copy_sources(path, include)
        _snapshots[key] = path
    return _snapshots[key]


def parse_execution_log(text):
    """Parses --execution_log_json_file output: a stream of JSON objects, one per spawn."""
    decoder = json.JSONDecoder()
    spawns, pos = [], 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return spawns
        spawn, pos = decoder.raw_decode(text, pos)
        spawns.append(spawn)


class Result:
    """One Bazel command: exit code, output, and the spawns of its execution log."""

    def __init__(self, args, code, stdout, stderr, spawns):
        self.args, self.code, self.spawns = args, code, spawns
        self.stdout, self.stderr = stdout, stderr

    def __repr__(self):
        return f"Result({' '.join(self.args)!r}, code={self.code})"

    def spawns_by_mnemonic(self, mnemonic):
        """The spawns of this mnemonic that do a target's work (not worker warm-ups)."""
        return [s for s in self.spawns if s.get("mnemonic") == mnemonic and not is_warm_up(s)]

    def warm_ups(self):
        """The worker warm-up spawns (rules/private/lib/warm_up.bzl), which share their worker's mnemonic."""
        return [s for s in self.spawns if is_warm_up(s)]

    def executed(self, mnemonic):
        """Spawns of this mnemonic that really ran (not served from a cache)."""
        return [s for s in self.spawns_by_mnemonic(mnemonic) if not s.get("remoteCacheHit")]

    def cache_hits(self, mnemonic):
        return [s for s in self.spawns_by_mnemonic(mnemonic) if s.get("remoteCacheHit")]

    def tests_run(self):
        """Package-relative paths of the tests that really ran ("zoo/mlp_pte_test").

        A test can have two TestRunner spawns (the test, then its XML report); this counts the
        test-setup.sh ones.
        """
        return sorted(
            s["commandArgs"][1] for s in self.executed("TestRunner")
            if s["commandArgs"][0].endswith("test-setup.sh")
        )

    def outputs_of(self, spawns):
        """Sorted workspace-relative output paths of the given spawns (bazel-out/... paths)."""
        return sorted(o["path"] for s in spawns for o in s.get("actualOutputs", []))

    def labels(self, mnemonic, executed_only=True):
        """The `//pkg:name` of each spawn, read from its first output's path."""
        spawns = self.executed(mnemonic) if executed_only else self.spawns_by_mnemonic(mnemonic)
        return sorted({_label_of(p) for p in self.outputs_of(spawns)} - {None})

    def check(self):
        if self.code != 0:
            raise AssertionError(
                f"bazel {' '.join(self.args)} failed ({self.code}):\n{self.stderr[-6000:]}"
            )
        return self


def is_warm_up(spawn):
    """A worker warm-up spawn: its only output is a <name>.warm marker (rules/private/lib/warm_up.bzl)."""
    return any(o["path"].endswith(".warm") for o in spawn.get("actualOutputs", []))


def _label_of(output_path):
    """bazel-out/k8-fastbuild/bin/zoo/mlp_ep.pt2 -> //zoo:mlp_ep (strips known suffixes)."""
    parts = output_path.split("/")
    if len(parts) < 5 or parts[0] != "bazel-out" or parts[2] != "bin":
        return None
    package, name = "/".join(parts[3:-1]), parts[-1]
    for suffix in (".pt2.json", ".pte.json", ".calib.json", ".pt2", ".pte", ".calib.pt"):
        if name.endswith(suffix):
            return f"//{package}:{name[:-len(suffix)]}"
    return None


class Workspace:
    """A copy of the repository at its own path, with its own Bazel output base."""

    def __init__(self, path, output_base, home=None, env=None):
        self.path, self.output_base = path, output_base
        # The home of the inner Bazel: no ~/.bazelrc of the user leaks in, and `~` in flags
        # (--config=cache's disk cache) lands here. Workspaces made by create() share one.
        self.home = home or os.path.join(os.path.dirname(output_base), "home")
        os.makedirs(self.home, exist_ok=True)
        self.env = {
            "PATH": os.pathsep.join([os.environ.get("PATH", ""), "/usr/bin", "/bin"]),
            "HOME": self.home,
            "RULES_TORCH_EXPORT_REUSE_VENV": outer_venv(),
        }
        for name in ("USER", "LOGNAME", "TMPDIR", "LANG"):
            if name in os.environ:
                self.env[name] = os.environ[name]
        for key, value in (env or {}).items():  # a None value removes the variable
            if value is None:
                self.env.pop(key, None)
            else:
                self.env[key] = value

    @classmethod
    def create(cls, name, *, base=None, include=DEFAULT_INCLUDE, env=None):
        """Copies the sources to <base>/<name> (base defaults to TEST_TMPDIR)."""
        base = base or scratch_dir()
        path = os.path.join(base, name)
        if os.path.exists(path):
            raise RuntimeError(f"harness: {path} exists; give each workspace its own name")
        copy_sources(path, include, root=snapshot(include))
        return cls(path, os.path.join(base, "output_bases", name), os.path.join(base, "home"), env)

    @classmethod
    def example(cls, folder, *, env=None):
        """A copy of the rules plus folder (a workspace under examples/, which .bazelignore
        hides from the rules' own workspace); Bazel runs in that folder."""
        base = scratch_dir()
        root = os.path.join(base, "checkout")
        copy_sources(root, DEFAULT_INCLUDE + (folder,))
        name = os.path.basename(folder)
        return cls(os.path.join(root, folder), os.path.join(base, "output_bases", name), os.path.join(base, "home"), env)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()

    def write(self, rel, text):
        """Writes a file in the workspace (creating folders); returns its absolute path."""
        target = os.path.join(self.path, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
        return target

    def read(self, rel, mode="r"):
        with open(os.path.join(self.path, rel), mode) as f:
            return f.read()

    def sha256(self, rel):
        return sha256_file(os.path.join(self.path, rel))

    def digests(self, rels):
        """{path: sha256} of several workspace-relative files (bazel-bin/... works)."""
        return {rel: self.sha256(rel) for rel in rels}

    def forget(self, *rels):
        """Removes built outputs (files or folders, workspace-relative: bazel-bin/... works), so
        the next build runs or fetches their actions again, as after `bazel clean`: Bazel checks
        its outputs before each build, and an action whose outputs are gone misses the action
        cache. Unlike a clean, which drops the server's loading and analysis too (and reruns the
        toolchain's warm-ups and deadline stamp), it costs the next build nothing else. Paths
        not built yet are skipped."""
        for rel in rels:
            path = os.path.realpath(os.path.join(self.path, rel))
            if os.path.isdir(path):
                for folder, _, _ in os.walk(path):
                    os.chmod(folder, 0o755)  # Bazel leaves a tree artifact's folder read-only
                shutil.rmtree(path)
            elif os.path.exists(path):
                os.remove(path)

    # An inner server lives for a few builds, too short for the JVM's C2 compiler to repay its
    # CPU: five small builds of the e2e zoo took the server 18.5 to 19.5 s of CPU with it and 9
    # to 10 s without (2026-11-27). The benchmarks, which time Bazel as a user runs it, set ().
    jvm_flags = ("-XX:TieredStopAtLevel=1",)

    def startup_flags(self):
        return [
            f"--output_base={self.output_base}",
            "--max_idle_secs=600",
            # Bazel expands `~` in flags such as --disk_cache from Java's user.home, not from
            # $HOME: point both at the scratch home, so no test writes to the real one.
            f"--host_jvm_args=-Duser.home={self.home}",
        ] + [f"--host_jvm_args={flag}" for flag in self.jvm_flags]

    def bazel(self, command, *args, env=None, timeout=BAZEL_TIMEOUT, log=True):
        """Runs `bazel command args...` here; build/test commands get an execution log.

        env adds to (or, with a None value, removes from) the inner Bazel's environment.
        """
        flags = list(args)
        log_path = None
        if log and command in ("build", "test", "run"):
            log_path = f"{self.output_base}-exec-{next(_LOG_NUMBERS)}.json"
            if os.path.exists(log_path):
                os.remove(log_path)
            flags.insert(0, f"--execution_log_json_file={log_path}")
        full_env = dict(self.env)
        for key, value in (env or {}).items():
            if value is None:
                full_env.pop(key, None)
            else:
                full_env[key] = value
        argv = [bazel_binary(), *self.startup_flags(), command, *flags]
        started = time.monotonic()
        done = subprocess.run(
            argv, cwd=self.path, env=full_env, capture_output=True, text=True, timeout=timeout
        )
        # Shown with a failing test's output: where an e2e test spends its time.
        print(f"harness: {os.path.basename(self.path)}: bazel {command} {' '.join(args)}: "
              f"exit {done.returncode}, {time.monotonic() - started:.1f} s", file=sys.stderr)
        spawns = []
        if log_path and os.path.exists(log_path):
            with open(log_path, encoding="utf-8") as f:
                spawns = parse_execution_log(f.read())
        return Result([command, *args], done.returncode, done.stdout, done.stderr, spawns)

    def build(self, *args, **kwargs):
        """`bazel build`, failing the test with Bazel's stderr if the build fails."""
        return self.bazel("build", *args, **kwargs).check()

    def popen(self, command, *args, env=None):
        """Starts a Bazel command without waiting (for tests that act mid-build)."""
        full_env = dict(self.env, **(env or {}))
        argv = [bazel_binary(), *self.startup_flags(), command, *args]
        return subprocess.Popen(
            argv, cwd=self.path, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )

    @property
    def execroot(self):
        return os.path.join(self.output_base, "execroot", "rules_torch_export")

    def replay(self, spawn, scratch, env=None, links=None, timeout=600):
        """Re-runs one logged spawn in `scratch`, which holds only the spawn's declared inputs.

        The inputs are copied from this workspace's execroot; `links` adds symlinks (path in
        scratch -> target), e.g. the venv that a container image would provide. env overrides
        the spawn's logged environment. Returns the subprocess.CompletedProcess.
        """
        for item in spawn.get("inputs", []):
            target = os.path.join(scratch, item["path"])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(os.path.join(self.execroot, item["path"]), target)
        for rel in {os.path.dirname(o["path"]) for o in spawn.get("actualOutputs", [])}:
            os.makedirs(os.path.join(scratch, rel), exist_ok=True)  # Bazel creates these too
        for rel, target in (links or {}).items():
            os.makedirs(os.path.dirname(os.path.join(scratch, rel)), exist_ok=True)
            os.symlink(target, os.path.join(scratch, rel))
        spawn_env = {v["name"]: v["value"] for v in spawn.get("environmentVariables", [])}
        spawn_env.update(env or {})
        return subprocess.run(
            spawn["commandArgs"], cwd=scratch, env=spawn_env, capture_output=True, text=True,
            timeout=timeout,
        )

    def info(self, key):
        return self.bazel("info", key, log=False).check().stdout.strip()

    def shutdown(self):
        """Stops this workspace's Bazel server (it would idle out on its own after 10 min)."""
        if os.path.isdir(self.output_base):
            subprocess.run(
                [bazel_binary(), *self.startup_flags(), "shutdown"],
                cwd=self.path, env=self.env, capture_output=True, timeout=120,
            )
