"""The "container image" of the local remote-execution stand-in: a venv at a fixed path.

toolchain/remote/Dockerfile describes the image a hosted executor runs: the venv at
/opt/rules_torch_export/venv, installed from toolchain/requirements.lock, and its identity
beside it. Here there is no container runtime, so the same layout is made on this machine, and
the executor bind-mounts it (and the interpreter the venv was made from) into every action.
Because the path is the same inside and outside the sandbox, a local fallback finds the
interpreter too.

Installing torch takes a minute or two, so the venv is kept between runs: a stamp file holds
the lock's sha256 and the base interpreter, and a venv whose stamp matches is reused.

    image = image_venv.ensure()      # /opt/rules_torch_export by default
    image.interpreter                # /opt/rules_torch_export/venv/bin/python3
    image.identity                   # the text of identity.txt (print_identity.py's output)
    image.mounts                     # host folders an action needs, to bind at the same path
"""

import fcntl
import functools
import os
import shutil
import subprocess
import sys
import time

from exporter.core.manifest import sha256_file

# The Dockerfile's layout. Another root (e.g. without write access to /opt):
# RULES_TORCH_EXPORT_IMAGE_ROOT=/some/fixed/path, plus the matching
# --//toolchain/remote:interpreter_path in the build.
DEFAULT_ROOT = "/opt/rules_torch_export"
ROOT_ENV = "RULES_TORCH_EXPORT_IMAGE_ROOT"


class Image:
    """A venv made from the lock at <root>/venv, with <root>/identity.txt beside it."""

    def __init__(self, root):
        self.root = root
        self.venv = os.path.join(root, "venv")
        self.interpreter = os.path.join(self.venv, "bin", "python3")
        self.identity_path = os.path.join(root, "identity.txt")
        self.stamp_path = os.path.join(root, "image.stamp")

    @property
    def identity(self):
        with open(self.identity_path, encoding="utf-8") as f:
            return f.read()

    @property
    def base_prefix(self):
        """The installation the venv's python links to (it must be mounted as well)."""
        return subprocess.run(
            [self.interpreter, "-I", "-c", "import sys; print(sys.base_prefix)"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()

    @functools.cached_property
    def mounts(self):
        """Host folders to bind read-only at the same path in every action (asked once: it
        runs the venv's python)."""
        return [self.root, os.path.realpath(self.base_prefix)]


def _repo_file(*parts):
    here = os.path.dirname(os.path.realpath(__file__))
    return os.path.join(os.path.dirname(os.path.dirname(here)), *parts)


def base_python():
    """The interpreter to make the venv from: the one under this process's venv, if any."""
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def _stamp(lock, python):
    return f"lock sha256 {sha256_file(lock)}\npython {python}\n"


def _log(message):
    print(f"image_venv: {message}", file=sys.stderr, flush=True)


def ensure(root=None, lock=None, python=None):
    """Returns the Image at root, (re)creating it if its stamp does not match the lock."""
    root = root or os.environ.get(ROOT_ENV) or DEFAULT_ROOT
    lock = lock or _repo_file("toolchain", "requirements.lock")
    python = python or base_python()
    image = Image(root)
    try:
        os.makedirs(root, exist_ok=True)
    except PermissionError:
        raise RuntimeError(
            f"image_venv: cannot create {root}; run as root, or set {ROOT_ENV} to a writable "
            "fixed path and pass --//toolchain/remote:interpreter_path=<it>/venv/bin/python3"
        ) from None
    wanted = _stamp(lock, python)
    # One creator at a time: two test processes may start together.
    with open(os.path.join(root, ".lock"), "w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        if _read(image.stamp_path) == wanted and os.path.exists(image.identity_path):
            return image
        _create(image, lock, python)
        with open(image.stamp_path, "w", encoding="utf-8") as f:
            f.write(wanted)  # last: an interrupted install is redone next time
    return image


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _create(image, lock, python):
    started = time.monotonic()
    for path in (image.stamp_path, image.identity_path):
        if os.path.exists(path):
            os.remove(path)
    shutil.rmtree(image.venv, ignore_errors=True)
    _log(f"creating {image.venv} from {lock} (pip, a minute or two)")
    subprocess.run([python, "-m", "venv", image.venv], check=True)
    log_path = os.path.join(image.root, "pip-install.log")
    with open(log_path, "w", encoding="utf-8") as log:
        done = subprocess.run(
            [image.interpreter, "-m", "pip", "install", "--no-deps", "--no-input",
             "--disable-pip-version-check", "-r", lock],
            stdout=log, stderr=subprocess.STDOUT,
        )
    if done.returncode != 0:
        raise RuntimeError(f"image_venv: pip install failed ({done.returncode}); see {log_path}")
    identity = subprocess.run(
        [image.interpreter, "-I", _repo_file("toolchain", "remote", "print_identity.py")],
        check=True, capture_output=True, text=True,
    ).stdout
    with open(image.identity_path, "w", encoding="utf-8") as f:
        f.write(identity)
    _log(f"created in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    made = ensure()
    print(made.interpreter)
