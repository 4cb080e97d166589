"""A backend's packages, from the repository Bazel fetched for it (toolchain/backend_packages.bzl),
made importable in the running action.

An action that lowers for, quantizes for or runs a backend whose packages are not in the
toolchain's lock gets the repository's identity.txt as a declared input (its config's
"backend_packages"). As the toolchain's python.sh finds its venv, the real folder of that file
holds the packages, in site-packages/: they go last on sys.path, after the toolchain's, so they
never shadow it. An action runs in a child process of its own (driver/worker_child.py), so the
path is gone after the request.

ExecuTorch's Python runtime finds OpenVINO's C library through OPENVINO_LIB_PATH, which its
portable_lib sets only if openvino was importable when it was first imported (the worker imports
it before any request): set here, before a program is loaded.
"""

import glob
import importlib
import importlib.metadata
import os
import sys

from exporter.core.errors import UserError


def site_folder(identity):
    """The site-packages folder of the repository whose identity.txt is `identity`."""
    return os.path.join(os.path.dirname(os.path.realpath(identity)), "site-packages")


def activate(identities):
    """Puts each repository's packages on sys.path (last) and points ExecuTorch at OpenVINO's
    C library when one of them holds openvino."""
    for identity in identities:
        folder = site_folder(identity)
        if not os.path.isdir(folder):
            raise UserError(f"the backend packages of {identity} are missing ({folder} is not a folder); "
                            f"run `bazel sync` or remove the repository's folder so that Bazel fetches it again")
        if folder not in sys.path:
            sys.path.append(folder)
    if identities:
        importlib.invalidate_caches()
        _openvino_library()


def _openvino_library():
    if os.environ.get("OPENVINO_LIB_PATH"):
        return
    for entry in sys.path:
        found = sorted(glob.glob(os.path.join(entry, "openvino", "libs", "libopenvino_c.so*")))
        if found:
            os.environ["OPENVINO_LIB_PATH"] = found[0]
            return


def versions(names):
    """{distribution: version} of the installed `names`, for the manifest; missing ones are
    None (a user's lock may leave a backend's packages out until a target names the backend)."""
    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found
