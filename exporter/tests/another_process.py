"""One fresh Python process for the tests that redo a lowering "in another process": each test
module registers its job when it is imported, and the first test that asks for a result runs
every registered job in one child (one import of torch and ExecuTorch, not one per test).

The child runs with another hash seed than this process and in a folder of its own; each job
gets a folder of its own under it (its last argument) and its prints (what it wrote to
sys.stdout) come back as its result.
"""

import functools
import json
import os
import subprocess
import sys
import tempfile

_JOBS: dict[str, tuple[str, tuple[str, ...]]] = {}

_CHILD = """
import contextlib, io, json, os, sys
results = {}
for name, (script, args) in json.loads(sys.argv[1]).items():
    folder = os.path.abspath(name)
    os.makedirs(folder)
    sys.argv = ["-c", *args, folder]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(script, name, "exec"), {"__name__": "__main__"})
    results[name] = {"printed": printed.getvalue(), "folder": folder}
print(json.dumps(results))
"""

# Another seed than this process's (the actions run at 0; pytest's own is random unless set).
SEED = "6" if os.environ.get("PYTHONHASHSEED") == "5" else "5"


def register(name, script, *args):
    """Adds a job: script runs as __main__ with sys.argv = ["-c", *args, its folder]."""
    _JOBS[name] = (script, tuple(args))


def result(name):
    """{"printed": job name's prints, "folder": its folder} from the shared child."""
    return _results()[name]


@functools.cache
def _results():
    cwd = tempfile.mkdtemp(prefix="another_process_", dir=os.environ.get("TEST_TMPDIR"))
    env = dict(os.environ, PYTHONHASHSEED=SEED, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(_JOBS)], cwd=cwd, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
