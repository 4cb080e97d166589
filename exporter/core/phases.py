"""Which part of an action runs now: the model's code, torch.export, ExecuTorch's lowering, or
ExecuTorch's runtime running the program.

A crash that kills the process (a signal, the OOM killer, os._exit) leaves no exception to
explain. So the code of each part marks itself (`with phases.running(phases.LOWERING, ...)`), and
the driver listens (listen): a crashed request's one line names the part it died in, and the
command that runs that part again (driver/worker_child.py, driver/crash.py).
"""

import contextlib

MODEL, EXPORT, LOWERING, RUNTIME = "model", "export", "lowering", "runtime"

_listener = None
_current: dict | None = None  # the phase running now: {"phase": ..., its details}


def listen(callback):
    """callback(phase) hears every change: a dict {"phase": MODEL, ...details} or None."""
    global _listener
    _listener = callback


def _become(phase):
    global _current
    _current = phase
    if _listener is not None:
        _listener(phase)


@contextlib.contextmanager
def running(phase, **details):
    """Marks the block as phase; details say which code, program or methods run: code= for MODEL
    and EXPORT ("torch_model //pkg:m"), backends= for LOWERING, program=, data= (a .ptd or "")
    and methods= (a list) for RUNTIME."""
    previous = _current
    _become(dict(details, phase=phase))
    try:
        yield
    finally:
        _become(previous)
