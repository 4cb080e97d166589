"""Finding the workspace file behind a failed import or read that the target never declared.

An action sees only its declared inputs: in the sandbox, and in the worker, whose children run
in a folder of the request's inputs (driver/input_tree.py). So an undeclared file is simply
missing, in both modes alike. To name it in the error, follow a declared file's symlink back to
the folder it came from (the workspace, or an external repository) and look there.
"""

import os


def _shared_folders(a, b):
    n = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1]):
        if x != y:
            break
        n += 1
    return n


def _source_of(path, declared):
    """Where path would be on disk, judged by the nearest declared file's symlink; None if no
    declared file tells (a one-shot run outside the sandbox, say)."""
    for near in sorted(declared, key=lambda d: (-_shared_folders(d, path), d)):
        real = os.path.realpath(near)
        if real != os.path.abspath(near) and real.endswith("/" + near):
            return os.path.join(real[: -len(near) - 1], path)
    return None


def _undeclared(path, declared):
    source = _source_of(path, declared) if path not in declared else None
    return path if source and os.path.isfile(source) else None


def module_file(module_name, declared, roots):
    """The execroot-relative path of the file that would provide module_name from one of the
    import roots, if it exists where the declared files come from but is not declared; else None."""
    declared = {os.path.normpath(p) for p in declared}
    base = module_name.replace(".", "/")
    for root in roots:
        for rel in (base + ".py", base + "/__init__.py"):
            found = _undeclared(os.path.normpath(os.path.join(root, rel)), declared)
            if found:
                return found
    return None


def data_file(path, declared):
    """path (execroot-relative), if that file exists where the declared files come from but is
    not declared itself; else None."""
    if not isinstance(path, str) or os.path.isabs(path):
        return None
    return _undeclared(os.path.normpath(path), {os.path.normpath(p) for p in declared})
