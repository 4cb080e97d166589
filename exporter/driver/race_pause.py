"""A pause that tests put into the driver's races, to make each one reproducible.

A race's window is a few instructions wide: between a fork and the child's own setpgid, between
creating a folder's .owner file and locking it, a phase's first instruction. With
RULES_TORCH_EXPORT_TEST_PAUSE=<point>:<folder> in its environment (set only by the driver's
tests: //exporter/driver:worker_sandbox_test, :isolation_test, :worker_test), the first process
to reach <point> writes its pid to <folder>/<point>.reached and waits there until
<folder>/<point>.go exists. Without the variable a pause is one dictionary lookup.
"""

import os
import time

VARIABLE = "RULES_TORCH_EXPORT_TEST_PAUSE"


def pause(point):
    """Waits at point if the test's variable names it and no other process got there first."""
    wanted, _, folder = os.environ.get(VARIABLE, "").partition(":")
    if wanted != point or not folder:
        return
    try:
        fd = os.open(os.path.join(folder, point + ".reached"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    # /proc/self, not getpid(): /proc is the machine's, so this is the pid the test can signal
    # from outside the request's PID namespace.
    os.write(fd, os.readlink("/proc/self").encode())
    os.close(fd)
    go = os.path.join(folder, point + ".go")
    while not os.path.exists(go):
        time.sleep(0.01)
