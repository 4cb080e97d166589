"""A backend's packages, from the repository Bazel fetched for it (toolchain/layered_locks.bzl),
made importable in the running action.

An action that lowers for, quantizes for or runs a backend whose packages have a lock of their own
declares the repository's package tree as inputs (its `:packages` target: the identity.txt that its
config's "backend_packages" names, and site-packages/ beside it), so the tree is in the action's
key and a remote executor receives it. The packages go last on sys.path, after the toolchain's,
so they never shadow it. An action runs in a child process of its own (driver/worker_child.py), so
the path is gone after the request.

ExecuTorch's runtimes find some backends' C libraries through an environment variable (the
record's runtime_library), which its Python runtime sets only if the package was importable when
it was first imported (the worker imports it before any request): set here, before a program is
loaded.
"""

import glob
import importlib
import importlib.metadata
import os
import sys

from exporter.core import backends
from exporter.core.errors import UserError


def site_folder(identity):
    """The site-packages folder of the repository whose identity.txt is `identity`: beside the
    file, where Bazel put the repository (the file's real path), or where the executor put the
    declared tree."""
    return os.path.join(os.path.dirname(os.path.realpath(identity)), "site-packages")


def activate(identities):
    """Puts each repository's packages on sys.path (last) and sets the variables that point
    ExecuTorch's runtimes at the backends' C libraries among them."""
    for identity in identities:
        folder = site_folder(identity)
        if not os.path.isdir(folder):
            raise UserError(f"the backend packages of {identity} are missing ({folder} is not a folder): the action "
                            f"did not get the repository's package tree; declare its :packages target as an input "
                            f"(rules/private/backends.bzl's backend_packages_labels gives it)")
        if folder not in sys.path:
            sys.path.append(folder)
    if identities:
        importlib.invalidate_caches()
        for record in backends.BY_NAME.values():
            if record.runtime_library:
                _point_at(*record.runtime_library)


def _point_at(variable, pattern):
    """Sets `variable` to the first file matching `pattern` under a sys.path folder, unless set."""
    if os.environ.get(variable):
        return
    for entry in sys.path:
        found = sorted(glob.glob(os.path.join(entry, pattern)))
        if found:
            os.environ[variable] = found[0]
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
