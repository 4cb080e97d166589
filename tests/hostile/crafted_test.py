"""Hostile files made on purpose, one change each, through the native runner and the Python
reader of their kind: each fails in one line that says what is wrong, and none kills the runner
by a signal. (The mutation test throws random damage at the same readers; these are the cases
its checks were written for, each of which crashed the runner or raised a parser's own error.)"""

import os
import struct
import subprocess

import pytest
import torch
from runfiles import Runfiles

from exporter.checks import etvals
from exporter.core.errors import BadFile
from exporter.formats import pt2, ptd, pte_inspect, pte_schema
from tests.hostile import mutants

RUNFILES = Runfiles.Create()


def _path(relative):
    return RUNFILES.Rlocation("rules_torch_export/" + relative)


RUNNER = _path("native/et_runner")
GRU = _path("models/gru/gru_pte.pte")
GRU_EP = _path("models/gru/gru_ep.pt2")
MOBILENET, MOBILENET_PTD = (_path(f"models/mobilenet/mobilenet_external_v1.{x}") for x in ("pte", "ptd"))


def _kernel_call(buf, operator):
    """(the forward plan, the first KernelCall table of `operator`) in a .pte's bytes."""
    plan = pte_inspect.read_program(buf).execution_plan[0]
    names = [op.name for op in plan.operators]
    for instruction in plan.chains[0].instructions:
        args = instruction.instr_args
        if args is not None and args.table_name == "KernelCall" and names[args.op_index] == operator:
            return plan, args
    raise AssertionError(f"no call of {operator}")


def _patch(buf, at, fmt, value):
    out = bytearray(buf)
    struct.pack_into(fmt, out, at, value)
    return bytes(out)


def operator_out_of_range(buf):
    _, call = _kernel_call(buf, "aten::slice_copy")
    return _patch(buf, call._field(0), "<i", 999)  # KernelCall.op_index


def int_argument_made_a_tensor(buf):
    _, call = _kernel_call(buf, "aten::slice_copy")  # (self, dim, start, end, step, out): dim is an Int
    arguments = call.args
    return _patch(buf, arguments._start + 4, "<i", arguments[0])  # dim := self, a Tensor


def truncated_flatbuffer(buf):
    return buf[:len(buf) // 5]


def layouts_without_sizes(buf):
    out = bytearray(buf)
    root = pte_schema.read_root(pte_schema.Schema(ptd.schema_path()), buf)
    for entry in root.named_data:
        layout = entry.tensor_layout
        if layout is not None:
            vtable = layout._pos - struct.unpack_from("<i", buf, layout._pos)[0]
            struct.pack_into("<H", out, vtable + 4 + 2 * 1, 0)  # TensorLayout.sizes: absent
    return bytes(out)


def tensor_data_past_the_end(buf):
    return _patch(buf, 40, "<Q", 2**40)  # the FH01 header's segment data size


def _gru_inputs():
    tokens = torch.arange(16, dtype=torch.long).reshape(2, 8) % 7
    return [tokens, tokens > 0]


def count_past_the_file(buf):
    return _patch(buf, 8, "<I", 2**32 - 1)


def bytes_not_matching_sizes(buf):
    return _patch(buf, 12 + 4, "<q", 9)  # value 0's first size: 2 -> 9 rows of 8, the bytes hold 2


# (name, kind, the valid file (None: the GRU's inputs), the change, what the runner says, what
#  the Python reader says (None: it reads the file: the change is one it does not depend on))
CASES = [
    ("operator_out_of_range", "pte", GRU, operator_out_of_range,
     'corrupt program: method "forward" calls operator 999 of 8', "calls operator 999 of 8"),
    ("int_argument_made_a_tensor", "pte", GRU, int_argument_made_a_tensor,
     "the runtime crashed (SIGABRT) while running method \"forward\"", None),
    ("truncated_flatbuffer", "pte", GRU, truncated_flatbuffer,
     "error 35 (InvalidProgram); is it a .pte? are its --data files given? (the runtime: ", "corrupt: "),
    ("layouts_without_sizes", "ptd", MOBILENET_PTD, layouts_without_sizes,
     "has a layout without sizes or dim_order", "has a layout without sizes or dim_order"),
    ("tensor_data_past_the_end", "ptd", MOBILENET_PTD, tensor_data_past_the_end,
     "corrupt .ptd: its header puts the tensor data past the end of the file",
     "its header puts the flatbuffer or the tensor data past the end"),
    ("count_past_the_file", "etvals", None, count_past_the_file,
     "says it holds 4294967295 values, more than its", "says it holds 4294967295 values, more than its"),
    ("bytes_not_matching_sizes", "etvals", None, bytes_not_matching_sizes,
     "value 0 holds 128 bytes; its kind and sizes need 576", "value 0 holds 128 bytes; its kind and sizes need 576"),
]


def _made(case, tmp_path):
    name, kind, source, change = case[:4]
    if source:
        with open(source, "rb") as f:
            valid = f.read()
    else:
        etvals.write(str(tmp_path / "valid.etvals"), _gru_inputs())
        valid = (tmp_path / "valid.etvals").read_bytes()
    path = tmp_path / f"{name}.{kind}"
    path.write_bytes(change(valid))
    return str(path)


def _runner_arguments(kind, path):
    return {"pte": [path, "--call", "forward"], "ptd": [MOBILENET, "--data", path, "--call", "forward"],
            "etvals": [GRU, "--call", f"forward={path}:{path}.out"]}[kind]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_runner_fails_in_one_line(case, tmp_path):
    path = _made(case, tmp_path)
    result = subprocess.run([RUNNER] + _runner_arguments(case[1], path), capture_output=True, text=True,
                            errors="replace")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr[-3000:]
    assert lines[0].startswith("et_runner: ") and os.path.basename(path) in lines[0] and case[4] in lines[0], lines[0]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_python_reader_fails_in_one_line(case, tmp_path):
    path = _made(case, tmp_path)
    read = {"pte": pte_inspect.summarize, "ptd": pte_inspect.summarize_ptd, "etvals": etvals.read}[case[1]]
    if case[5] is None:
        read(path)
        return
    with pytest.raises(BadFile) as refused:
        read(path)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(path) and case[5] in message, message


# Python planted where torch evaluates a .pt2's text (mutants.planted): a size expression
# (sympy.sympify, in torch.export.load), a guard (exec, in ExportedProgram.module()) or a graph
# input's name (the forward torch.fx writes and defines in torch.export.load).
PLANTED = [("expr_str", "holds the size expression"), ("guards_code", "holds the guard"), ("name", "holds the name")]


@pytest.mark.parametrize("only, refusal", PLANTED, ids=[p[0] for p in PLANTED])
def test_python_planted_in_a_pt2_is_refused_and_never_runs(only, refusal, tmp_path):
    marker, path = tmp_path / "marker", tmp_path / "planted.pt2"
    with open(GRU_EP, "rb") as f:
        path.write_bytes(mutants.planted(f.read(), str(marker), seed=0, only=only)[1])
    with pytest.raises(BadFile) as refused:
        pt2.load(str(path))
    message = str(refused.value)
    assert "\n" not in message and message.startswith(str(path)) and f"models/model.json {refusal}" in message, message
    assert not marker.exists()
