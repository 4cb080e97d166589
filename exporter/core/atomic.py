"""Writing outputs in one step, through a temp file of this call's own beside each output.

A build interrupted with Ctrl-C can leave a worker's child running while the next build runs
the same action again. A fixed temp name (`<out>.tmp`) let the two write into one file, and a
clean-up by name removed what the other had finished. So each write goes through a folder no
other process or call uses, then a rename, and a failed request removes only what it wrote.

The temp file keeps the output's name plus ".tmp": torch.export.save names the archive's root
folder after the file it writes, so the name is part of a .pt2's bytes.
"""

import contextlib
import os
import secrets
import shutil

_written = {}  # absolute output path -> (device, inode) of what this process put there


def temp_beside(path):
    """A new temp path, <output>.tmp in a private folder beside path; remove_temp() removes it."""
    name = os.path.basename(path)
    folder = os.path.join(os.path.dirname(path), f".{name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    os.mkdir(folder)
    return os.path.join(folder, name + ".tmp")


def remove_temp(tmp):
    shutil.rmtree(os.path.dirname(tmp), ignore_errors=True)


def _remember(path):
    info = os.lstat(path)
    _written[os.path.abspath(path)] = (info.st_dev, info.st_ino)


def commit(tmp, path):
    """Renames the file tmp to path, and remembers that this process wrote path."""
    os.replace(tmp, path)
    _remember(path)


@contextlib.contextmanager
def replacing(path):
    """Yields a temp path to write; on success it becomes path, on failure it goes."""
    tmp = temp_beside(path)
    try:
        yield tmp
        commit(tmp, path)
    finally:
        remove_temp(tmp)


def write_bytes(path, data):
    """Writes data to path in one step."""
    with replacing(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)


def made_folder(path):
    """Creates the output folder path (if need be) and remembers that this process filled it."""
    os.makedirs(path, exist_ok=True)
    _remember(path)


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def remove_own(path):
    """Removes path if what is there now is what this process wrote; returns whether it did."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if _written.get(os.path.abspath(path)) != (info.st_dev, info.st_ino):
        return False
    _remove(path)
    return True
