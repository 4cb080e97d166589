"""The one line for a request whose process died without answering (a signal, the OOM killer,
os._exit): which phase it died in (core/phases.py: the model's code, the export, the lowering, or
ExecuTorch's runtime running the program), where the crash is, and the command that runs that
phase again.

Before, every such crash read "while running this target's model code; the crash is in the model
or an op it calls", also when ExecuTorch's runtime crashed running a program inside a
NumericsValues action.
"""

import os
import signal

from exporter.core import phases

# phase -> (what ran, where the crash is); {code}, {backends}, {methods} and {program} are the
# phase's details.
_PHASES = {
    phases.MODEL: ("running the code of {code}", "the crash is in the model or an op it calls"),
    phases.EXPORT: ("torch.export traced {code}", "the crash is in torch.export or an op the model calls as "
                                                  "it is traced"),
    phases.LOWERING: ("ExecuTorch lowered the program (backends: {backends})", "the crash is in ExecuTorch's "
                      "lowering or a backend's partitioner or compiler, not in the model's code"),
    phases.RUNTIME: ("ExecuTorch's runtime ran {methods} of {program}", "the crash is in the runtime, or in a "
                     "kernel or delegate the program calls, not in the model's code"),
    None: ("running the exporter's own code for this action", "the crash is outside the model's code, the "
           "export, the lowering and the runtime"),
}


def _how(status):
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status))
        return f"was killed by signal {sig.name}" + (" (out of memory?)" if sig == signal.SIGKILL else "")
    return f"exited with status {os.WEXITSTATUS(status)} (os._exit in model code?)"


def _details(phase):
    """The phase's details for _PHASES' texts, with defaults for any a phase left out."""
    details = {"code": "the model", "backends": "portable", "program": "the program", "methods": "a method"}
    details.update({k: v for k, v in phase.items() if isinstance(v, str) and v})
    listed = [m for m in phase.get("methods", ()) if isinstance(m, str)]
    if listed:
        details["methods"] = "method " + ", ".join(listed)
    return details


def _native_run(phase, peek):
    """The command that runs the program alone in the native runtime, for a crash in the runtime."""
    repository = peek.deadline_flag.partition("//")[0]  # "@rules_torch_export", or "" in its own workspace
    data = f" --data $PWD/{phase['data']}" if phase.get("data") else ""
    calls = "".join(f" --call {m}" for m in phase.get("methods", ()))
    return (f"; run the program alone in the native runtime, which checks it before it runs it, with "
            f"`bazel run {repository}//native:et_runner -- $PWD/{phase['program']}{data}{calls}`")


def explain(status, phase, peek):
    """The one line for a child that ended with waitpid status without answering, in phase (the
    last it entered: a dict of core/phases.py, or None); peek is the request's request.Peek."""
    known = phase if isinstance(phase, dict) and phase.get("phase") in _PHASES else {"phase": None}
    where, blame = (text.format(**_details(known)) for text in _PHASES[known["phase"]])
    action = peek.action
    one_shot = f"--strategy={action.mnemonic}=sandboxed" if action else "--spawn_strategy=sandboxed"
    native = _native_run(known, peek) if known["phase"] == phases.RUNTIME and known.get("program") else ""
    return (f"ERROR: {peek.label}: the exporter process {_how(status)} while {where}; {blame}: reproduce it "
            f"outside the worker with `bazel build {peek.label} {one_shot}`{native}\n")
