"""A numerics_test's values, computed by its build action (actions/numerics_values.py) and read by
the test (checks/numerics.py, checks/steps.py) with numpy alone: for each call, the inputs fed,
the reference's outputs, and the outputs of ExecuTorch's Python runtime (or the line it
rejected the inputs with).

Two files: <name>.values.json, the calls and what the report names, and <name>.values.etvals,
every value in order (formats/value_file.py), which the JSON points into.
"""

import dataclasses
import json

from exporter.core import atomic
from exporter.core.errors import BadFile
from exporter.formats import value_file

FORMAT = "rules_torch_export/numerics-values/1"


@dataclasses.dataclass
class Call:
    """One call of the method under test (a case, or a step of a stateful test).

    feed          the inputs, in the program's order (Tensors and scalars)
    expected      the reference's output tensors, flattened
    python        the Python runtime's outputs, or None when it did not run or rejected the inputs
    python_error  the first line of the runtime's error when it rejected them, else None
    """

    name: str
    method: str
    feed: list
    expected: list
    python: list | None = None
    python_error: str | None = None


@dataclasses.dataclass
class CaseValues:
    """What a numerics_test compares.

    reference     what computes the expected outputs, as the report names it ("the eager model //m:x")
    calls         the Calls, in order
    inputs        the number of inputs the method takes
    arm64_cases   the names of the calls the arm64 runner takes, or None for all of them
    error         a problem with the test's inputs, reported as its one line; then calls is []
    output_names  the method's outputs' names in the model ("logits"; core/output_tree.py), or None
    runtime       the version of the ExecuTorch whose Python runtime ran the calls, or None: a test
                  of a release checks that it ran in that release (docs/compatibility.md)
    refused       why that Python runtime refused the program, in words (core/runtime_errors.py),
                  or None; then error says it with the file's path
    """

    reference: str = ""
    calls: list = dataclasses.field(default_factory=list)
    inputs: int = 0
    arm64_cases: list | None = None
    error: str | None = None
    output_names: list | None = None
    runtime: str | None = None
    refused: str | None = None


def _span(values, more):
    """[first index, count] of more once appended to values."""
    span = [len(values), len(more)]
    values.extend(more)
    return span


def encode(case_values):
    """(the JSON text, the value file's bytes) of a CaseValues."""
    values, calls = [], []
    for call in case_values.calls:
        calls.append({
            "name": call.name,
            "method": call.method,
            "feed": _span(values, call.feed),
            "expected": _span(values, call.expected),
            "python": _span(values, call.python) if call.python is not None else None,
            "python_error": call.python_error,
        })
    header = {"format": FORMAT, "reference": case_values.reference, "calls": calls, "inputs": case_values.inputs,
              "arm64_cases": case_values.arm64_cases, "error": case_values.error,
              "output_names": case_values.output_names, "runtime": case_values.runtime,
              **({"refused": case_values.refused} if case_values.refused else {})}  # others keep their bytes
    return json.dumps(header, indent=1, sort_keys=True) + "\n", value_file.encode(values)


def write(case_values, json_path, values_path):
    """Writes both files, each in one step."""
    text, data = encode(case_values)
    atomic.write_bytes(values_path, data)
    atomic.write_bytes(json_path, text.encode("utf-8"))


def read(json_path, values_path):
    """The CaseValues of both files."""
    with open(json_path, encoding="utf-8") as f:
        header = json.load(f)
    if header.get("format") != FORMAT:
        raise BadFile(f"{json_path}: not a {FORMAT} file")
    values = value_file.read(values_path)

    def take(span):
        return None if span is None else values[span[0]:span[0] + span[1]]

    calls = [Call(c["name"], c["method"], take(c["feed"]), take(c["expected"]), take(c["python"]), c["python_error"])
             for c in header["calls"]]
    return CaseValues(header["reference"], calls, header["inputs"], header["arm64_cases"], header["error"],
                      header.get("output_names"), header.get("runtime"), header.get("refused"))
