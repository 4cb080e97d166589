"""Replacing one attribute of a library's module or class for the length of a block.

The lowering changes a few of ExecuTorch's functions while it runs (actions/delegates.py says
which and why); each change is undone when the block ends, raise or not, so the next request in
the same process meets the library as it ships.
"""

import contextlib


@contextlib.contextmanager
def replaced(owner, name, value):
    """owner.name is value inside the block; yields what it was."""
    original = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield original
    finally:
        setattr(owner, name, original)
