"""Captures everything a request prints (torch is chatty), at the file-descriptor level.

Bazel shows any output of a successful action, and in worker mode stdout is the protocol
channel, so nothing torch prints may reach the real stdout or stderr.
"""

import contextlib
import os
import sys
import tempfile


@contextlib.contextmanager
def captured_output():
    """Redirects fds 1 and 2 into a temp file; yields a function that returns the text so far."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)

        def read():
            sys.stdout.flush()
            sys.stderr.flush()
            log.seek(0)
            return log.read().decode("utf-8", "replace")

        try:
            yield read
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
