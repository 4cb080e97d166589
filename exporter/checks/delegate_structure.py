"""The runner behind delegate_structure_test: what can be checked of a program that no runtime of
this machine runs (run, on a contract.DelegateStructureConfig).

Each delegate of a backend whose record names a structure reader (backend_hooks/checks/) must be what
that reader loads, and a method that one delegate runs whole has the delegate's inputs and
outputs: as many, and each input's largest shape the method's (the .pte's sizes are upper
bounds).

run(config) is check(config), one Finding per delegate, then render(config, findings).
"""

import dataclasses
import importlib
import sys

from exporter.checks import contract
from exporter.core import backends
from exporter.formats import program_summary, pte_inspect

# The backends whose delegates the check reads, in the order backends are listed.
READ = [record for record in backends.BY_NAME.values() if record.structure_check]


@dataclasses.dataclass(frozen=True)
class Finding:
    """One delegate: its backend, its method, its inputs' and outputs' shapes, and what is wrong."""

    backend: backends.Backend
    method: str
    inputs: list
    outputs: list
    problem: str | None = None


def _mismatch(method, inputs, outputs):
    """What differs between a method run whole by one delegate and that delegate, or None."""
    wanted = [i.get("sizes") for i in method["inputs"] if i["type"] == "tensor"]
    if inputs != wanted:
        return f"its inputs' shapes are {inputs}, the method's {wanted}"
    if len(outputs) != len(method["outputs"]):
        return f"it has {len(outputs)} output(s), the method {len(method['outputs'])}"
    return None


def payloads(data, program, backend_id):
    """{method name: [payload bytes]} of each of the program's delegates of `backend_id`, inline
    in the flatbuffer or in a segment (after the 'eh00' header's segment base, bytes 24 to 32)."""
    segment_base = int.from_bytes(data[24:32], "little") if data[8:12] == b"eh00" else 0
    found = {}
    for plan in program.execution_plan:
        for delegate in plan.delegates:
            if delegate.id != backend_id:
                continue
            processed = delegate.processed
            if program_summary.enum_name(processed.location) == "INLINE":
                payload = bytes(program.backend_delegate_data[processed.index].data)
            else:
                segment = program.segments[processed.index]
                payload = data[segment_base + segment.offset:segment_base + segment.offset + segment.size]
            found.setdefault(plan.name, []).append(payload)
    return found


def _finding(record, method_name, method, payload):
    reader = importlib.import_module(record.structure_check)
    try:
        inputs, outputs = reader.read(payload)
    except Exception as e:  # noqa: BLE001 (a backend's library and ExecuTorch's errors share no class)
        return Finding(record, method_name, [], [], f"is not a {reader.KIND} {reader.LOADER} loads ({type(e).__name__}: {e})")
    whole = method["delegates"][record.delegate_id]["count"] == 1 and not method["operators"]  # nothing outside it
    return Finding(record, method_name, inputs, outputs, _mismatch(method, inputs, outputs) if whole else None)


def check(config):
    """One Finding per delegate of the program that a backend's reader reads; [] when it has none."""
    data = pte_inspect.read_file(config.pte)
    with pte_inspect.refusing_corrupt(config.pte):
        program = pte_inspect.read_program(data)
        methods = program_summary.methods(program)
        found = [(record, payloads(data, program, record.delegate_id)) for record in READ]
    return [_finding(record, name, methods[name], payload)
            for record, each in found for name, listed in each.items() for payload in listed]


def render(config, findings):
    if not findings:
        titles = " or ".join(record.title for record in READ)
        return False, (f"{config.label}: {config.program} has no {titles} delegate; "
                       f"lower it with backends = [{READ[0].name}(...)] or remove this test\n")
    lines = [f"{config.label}: {config.program}: method {f.method}'s {f.backend.title} delegate {f.problem}\n"
             for f in findings if f.problem]
    if lines:
        return False, "".join(lines)
    return True, "".join(f"{config.program}: method {f.method}: a {f.backend.title} "
                         f"{importlib.import_module(f.backend.structure_check).KIND}, inputs {f.inputs}, "
                         f"outputs {f.outputs}\n" for f in findings)


def run(config):
    return render(config, check(config))


def main(argv):
    return contract.main(argv, contract.DelegateStructureConfig, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
