"""InstructionCount: how many instructions each method of a program runs in the native runner,
counted by valgrind's callgrind: program_budget_test's max_instructions compares the counts.

The runner runs once under callgrind, unsupervised (ET_RUNNER_UNSUPERVISED: no forked
supervisor), with every kernel on its one thread (--one-thread), calling each method once on
its synthetic inputs at the method's largest shapes (the inputs executorch_benchmark times). It
marks its phases with callgrind's client requests (native/et_runner.cc): a dump "load" when the
program and its methods are loaded (the process's start included) and a dump "call METHOD"
around each call. Only the main thread's dumps count (--separate-threads): a thread pool's idle
workers start when the scheduler lets them, and their few thousand instructions would fall into
one call's count or another's. What they ran is recorded as other_threads.

The counts depend on the CPU the program sees, which under valgrind is the CPU valgrind presents
(its CPUID is emulated: valgrind 3.19 presents an Intel family 6 model 60 CPU with AVX2 on this
AMD host, and chooses it by the host's instruction sets, not its maker). The file records that
CPU and the host's, and the action is per machine (never shared through a remote cache).
"""

import glob
import json
import os
import subprocess
import tempfile

from exporter.core import atomic, manifest
from exporter.core.errors import UserError

FORMAT = "rules_torch_export/instructions/1"
_TRIGGER = "desc: Trigger: Client Request: "


def _dumps(folder):
    """{thread number: [(dump name, instructions)]} of callgrind's files in folder, in dump order."""
    found = {}
    for path in glob.glob(os.path.join(folder, "callgrind.out*")):
        base, dash, thread = os.path.basename(path).rpartition("-")
        if not dash or not thread.isdigit():  # callgrind's file of no thread, left empty
            continue
        part = base[len("callgrind.out"):].lstrip(".")
        name, total = "end", 0
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(_TRIGGER):
                    name = line[len(_TRIGGER):].strip()
                elif line.startswith(("totals:", "summary:")):
                    total = int(line.split()[1])
        found.setdefault(int(thread), []).append((int(part or 1 << 30), name, total))
    return {thread: [(name, total) for _, name, total in sorted(dumps)] for thread, dumps in found.items()}


def counts(dumps, methods, label):
    """{"load": n, "methods": {method: n}, "other_threads": n} from _dumps' result, or UserError."""
    main = dumps.get(1, [])
    calls = {name.partition(" ")[2]: total for name, total in main if name.startswith("call ")}
    loads = [total for name, total in main if name == "load"]
    missing = [m for m in methods if m not in calls]
    if not loads or missing:
        raise UserError(f"{label}: the native runner marked no {'load' if not loads else 'call of ' + missing[0]} "
                        f"for callgrind: it was built without valgrind's client requests "
                        f"(<valgrind/callgrind.h>); install Debian's valgrind (./bazelw does as root) and build again")
    others = sum(total for thread, found in dumps.items() if thread != 1 for _, total in found)
    return {"load": loads[0], "methods": {m: calls[m] for m in methods}, "other_threads": others}


def host_cpu():
    """The host's CPU as /proc/cpuinfo names it: vendor, family, model and model name."""
    fields = {}
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            key, _, value = line.partition(":")
            if not line.strip():
                break
            fields[key.strip()] = value.strip()
    return {"vendor": fields.get("vendor_id", "?"), "family": int(fields.get("cpu family", "-1")),
            "model": int(fields.get("model", "-1")), "name": fields.get("model name", "?")}


def callgrind_dumps(callgrind, runner, pte, calls, label, ptd=None):
    """(_dumps' result, the runner's JSON report) of one run of `runner` under callgrind with the
    runner's --call arguments `calls` (METHOD or METHOD=IN.etvals); a failure is a UserError naming
    label."""
    with tempfile.TemporaryDirectory(prefix="callgrind-") as folder:
        command = [callgrind, "--separate-threads=yes", f"--callgrind-out-file={folder}/callgrind.out",
                   os.path.abspath(runner), pte, "--one-thread"]
        command += [a for call in calls for a in ("--call", call)] + (["--data", ptd] if ptd else [])
        result = subprocess.run(command, capture_output=True, text=True,
                                env=dict(os.environ, ET_RUNNER_UNSUPERVISED="1"))
        if result.returncode != 0:
            lines = [line for line in result.stderr.splitlines() if line.startswith(("et_runner:", "valgrind is"))]
            reason = lines[-1] if lines else (result.stderr.strip().splitlines() or [f"exit {result.returncode}"])[-1]
            raise UserError(f"{label}: cannot count its instructions under callgrind: {reason}")
        return _dumps(folder), json.loads(result.stdout.strip().splitlines()[-1])


def count(callgrind, runner, pte, methods, label, ptd=None):
    """(counts, the runner's JSON report) of one run of `runner` under callgrind, each method called
    once on its synthetic inputs: counts is {"load": n, "methods": {method: n}, "other_threads": n}."""
    dumps, report = callgrind_dumps(callgrind, runner, pte, methods, label, ptd)
    return counts(dumps, methods, label), report


def run(config):
    """The InstructionCount action: outputs["counts"], the counts' JSON file."""
    found, report = count(config.callgrind, config.runner, config.pte, config.methods, config.program, config.ptd)
    with open(config.valgrind_version, encoding="utf-8") as f:
        valgrind = f.read().strip().splitlines()[0]
    found.update({
        "format": FORMAT,
        "program": config.program,
        "pte_sha256": manifest.sha256_file(config.pte),
        "inputs": "synthetic, at each method's largest shapes",
        "threads": 1,
        "cpu": report.get("cpu"),  # as the runner saw it under valgrind
        "host_cpu": host_cpu(),
        "valgrind": valgrind,
    })
    atomic.write_bytes(config.outputs["counts"], (json.dumps(found, indent=2, sort_keys=True) + "\n").encode("utf-8"))
