"""Where a request's child writes its outputs: a private folder beside each of their folders,
from which the parent moves the declared outputs, and only those, into place once the child
succeeded.

Every target of a package writes into the same bazel-out/<config>/bin/<package>/. With that
folder writable, a model's code could rewrite or delete a neighbour target's .pt2 or .pte, which a
consumer later in the build would read. linux-sandbox gives a spawn only its own outputs; so
does this: the child may write nowhere in bazel-out but its private folders (isolation.contain),
and the parent publishes what the request declared. A failed or stopped request publishes
nothing but its log, so it leaves no partial output. The private folder sits beside the output,
not in /tmp: the move is a rename within one file system, so an output keeps its bytes and
appears in one step, whatever its size.

A folder's name carries the worker's process (its PID namespace and pid): a worker killed by
SIGKILL cannot remove its folders, so the next request that stages into the same folder removes
those of a process of its own namespace that is gone. A pid of another namespace means nothing
here, so those stay.
"""

import os
import secrets
import shutil

_PREFIX = ".rules_torch_export-"


class Staging:
    """The private folders of one request, for outputs {role: absolute path}. Made by the parent
    before it forks the child; error is why they could not be made, or None."""

    def __init__(self, outputs):
        self.outputs, self.folders, self.error = dict(outputs), {}, None
        name = f"{_PREFIX}{_process()}-{secrets.token_hex(8)}"
        try:
            for folder in sorted({os.path.dirname(path) for path in self.outputs.values()}):
                os.makedirs(folder, exist_ok=True)
                _remove_orphans(folder)
                self.folders[folder] = os.path.join(folder, name)
                os.mkdir(self.folders[folder], 0o700)
        except OSError as e:
            self.error = f"cannot make the request's private output folder: {e}"

    def _staged(self, output):
        folder = self.folders.get(os.path.dirname(output))
        return folder and os.path.join(folder, os.path.basename(output))

    def path(self, output):
        """Where the child writes output (an absolute path the parent staged)."""
        staged = self._staged(output) if output in self.outputs.values() else None
        if not staged:
            raise ValueError(f"{output} is not an output the worker prepared for this request")
        return staged

    def publish(self, succeeded):
        """Moves the staged outputs into place (only the log if the request failed), then removes
        the private folders; returns why a move failed, or None."""
        error = None
        for role, output in sorted(self.outputs.items()):
            staged = self._staged(output)
            if staged and (succeeded or role == "log") and os.path.lexists(staged) and error is None:
                try:
                    _replace(staged, output)
                except OSError as e:
                    error = f"cannot move its output {os.path.basename(output)} into place: {e.strerror}"
        self.discard()
        return error

    def discard(self):
        for folder in self.folders.values():
            shutil.rmtree(folder, ignore_errors=True)


def _process():
    """"<PID namespace>.<pid>" of this process ("0.<pid>" where /proc does not say)."""
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        namespace = 0
    return f"{namespace}.{os.getpid()}"


def _remove_orphans(folder):
    """Removes the private folders in `folder` of this PID namespace's workers that are gone."""
    namespace, _, _ = _process().partition(".")
    for entry in os.listdir(folder):
        owner = entry[len(_PREFIX):].partition("-")[0] if entry.startswith(_PREFIX) else ""
        owner_namespace, _, pid = owner.partition(".")
        if owner_namespace == namespace != "0" and pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(os.path.join(folder, entry), ignore_errors=True)


def _running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: running
        pass
    return True


def _replace(staged, output):
    """Renames staged to output; a folder output (a tree artifact) replaces the folder there."""
    if os.path.isdir(output) and not os.path.islink(output) and os.path.isdir(staged):
        shutil.rmtree(output)
    os.replace(staged, output)
