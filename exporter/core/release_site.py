"""An ExecuTorch release's packages, ahead of the toolchain's venv in the running process.

An action of a program lowered for a release other than the toolchain's own (core/releases.py)
runs on the toolchain's interpreter with `--executorch_layer=<the release's identity.txt>` before
its request (rules/private/lib/exporter_action.bzl). The release's repository
(toolchain/release_repository.bzl) holds its packages in site-packages/ beside that file; they go
first on the import path, before anything imports ExecuTorch, so the release's executorch (and
its other pins) shadow the toolchain's, and its torch is the toolchain's. The argument is part of
the persistent worker's key: each release has a worker of its own, and a request never changes
the import path of a process that imported another release.
"""

import importlib
import os
import sys

from exporter.core import backend_site
from exporter.core.errors import UserError


def activate(identity):
    """Puts the release's packages beside `identity` first on the import path (after the
    exporter's own folder), and points ExecuTorch's serializer at the release's flatc."""
    if "executorch" in sys.modules:
        raise RuntimeError("an ExecuTorch release's packages must be activated before executorch is imported")
    folder = backend_site.site_folder(identity)
    if not os.path.isdir(folder):
        raise UserError(f"the ExecuTorch release's packages of {identity} are missing ({folder} is not a folder): "
                        f"declare its repository's :packages as an input (exporter_action.bzl does for a release)")
    sys.path.insert(1, folder)
    # ExecuTorch 1.3 finds the flatc its wheel ships only through this variable, or on PATH.
    flatc = os.path.join(folder, "executorch", "data", "bin", "flatc")
    if os.path.isfile(flatc):
        os.environ.setdefault("FLATC_EXECUTABLE", flatc)
    importlib.invalidate_caches()
