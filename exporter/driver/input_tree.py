"""A private execroot for one worker request: a folder of symlinks to its declared inputs only.

Bazel's sandbox runs a one-shot action in such a folder. A persistent worker runs in the real
execroot instead, where every file of the workspace is reachable, so a model could import a
file its target never declared and the cache would keep bytes its key does not describe. Bazel
lists each request's inputs (WorkRequest.inputs); the worker's child builds the same kind of
folder from them and works there, so an undeclared file is missing in both modes alike.
Outputs still go to the real execroot (request.run makes their paths absolute first).
"""

import os
import sys


class InputPathError(ValueError):
    """An input path that would reach outside the folder."""


def _checked(path):
    parts = path.split("/")
    if not path or os.path.isabs(path) or ".." in parts or "" in parts:
        raise InputPathError(f"the request names the input {path!r}, which is not a plain execroot-relative path")
    return path


def build(root, execroot, inputs):
    """Makes root/<path> a symlink to execroot/<path> for each input path; returns root."""
    for path in sorted({_checked(p) for p in inputs}):
        link = os.path.join(root, path)
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if not os.path.lexists(link):  # a folder input and a file inside it: the folder wins
            os.symlink(os.path.join(execroot, path), link)
    return root


def enter(root, execroot):
    """Works in root from now on: the current folder, and sys.path entries inside execroot."""
    prefix = execroot.rstrip("/") + "/"
    sys.path[:] = [
        root if entry == execroot else os.path.join(root, entry[len(prefix):]) if entry.startswith(prefix) else entry
        for entry in sys.path
    ]
    os.chdir(root)
