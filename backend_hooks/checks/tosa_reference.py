"""numerics_test's runtime "tosa_reference" (docs/backends.md, "Arm"): a TOSA program's method
run without a TOSA device. Its delegates' TOSA graphs (the TOSABackend blobs, as the lowering
wrote them) run in the TOSA reference model (tosa-tools' tosa_reference_model), and the int8
programs' quantize and dequantize operators outside them in numpy, as ExecuTorch's quantized
kernels compute them (float32 arithmetic, round half to even). An Ethos-U program's delegates
are Vela's command streams, which run only on the NPU: in their place runs the INT TOSA graph Vela
compiled each from, which the lowering kept (`<name>.vela_tosa.json`, backend_hooks/vela.py), found by
the sha256 of the delegate's blob. The few CPU operators the partitioner leaves beside an Arm
delegate that only move, select or cast values (SHAPED) run in numpy too. Any other operator,
instruction or delegate fails the run in one line: this is a reference of the delegate, not a runtime.
"""

import base64
import binascii
import hashlib
import json
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from exporter.core import backend_site, dtypes
from exporter.core.errors import BadFile
from exporter.formats import program_summary, pte_inspect, value_file

GRAPHS_FORMAT = "rules_torch_export/vela-tosa/1"  # backend_hooks/vela.py writes it
MAX_GRAPHS_BYTES = 1 << 30

# ExecuTorch's ScalarType codes of the quantized dtypes the kernels take.
_INT_DTYPES = {0: np.uint8, 1: np.int8, 2: np.int16, 3: np.int32}
_SCALARS = {"Double": "double_val", "Int": "int_val", "Bool": "bool_val"}


class Unsupported(ValueError):
    """What the runtime cannot run, in one line (numerics.py reports it as the run's failure)."""


def _quantize(x, scale, zero_point, qmin, qmax, dtype):
    inverse = np.float32(1.0) / np.float32(scale)
    q = np.rint((x.astype(np.float32) * inverse).astype(np.float32)) + zero_point
    return np.clip(q, qmin, qmax).astype(_INT_DTYPES[dtype])


def _dequantize(q, scale, zero_point, qmin, qmax, dtype, out_dtype=None):
    return ((q.astype(np.int32) - zero_point).astype(np.float32) * np.float32(scale)).astype(np.float32)


# Each CPU operator the runtime runs: (its function, how many of its leading arguments it takes).
KERNELS = {
    "quantized_decomposed::quantize_per_tensor.out": (_quantize, 6),
    "quantized_decomposed::dequantize_per_tensor.out": (_dequantize, 7),
}


# The CPU operators an Arm program keeps around its delegates when the partitioner refuses them
# (the zoo's encoder on an Ethos-U55: the embedding's gather, the padding mask's bool operators,
# the token ids' int64 cast). Each gives its logical result; _shaped casts it to the out tensor's
# dtype and static sizes, which is all a view, an unsqueeze or a dtype copy does.
def _bitwise_not(a):
    return np.logical_not(a) if a.dtype == np.bool_ else np.invert(a)


def _index_select(a, dim, index):
    return np.take(a, index.astype(np.int64), axis=dim)


def _same(a, *_):
    return a


SHAPED: dict[str, tuple[Callable[..., Any], int]] = {
    "aten::view_copy.out": (_same, 1),
    "aten::unsqueeze_copy.out": (_same, 1),
    "dim_order_ops::_to_dim_order_copy.out": (_same, 1),
    "aten::bitwise_not.out": (_bitwise_not, 1),
    "aten::index_select.out": (_index_select, 3),
}


def _shaped(result, out):
    """result in the dtype and sizes of the plan's out tensor (static: Arm's programs are)."""
    dtype = np.dtype(dtypes.torch_name(out.scalar_type))
    return np.ascontiguousarray(np.asarray(result).astype(dtype).reshape(list(out.sizes)))


def _default_order(plan, index):
    """Whether a dim_order argument is None or 0, 1, 2, ...: the only layout the runtime keeps."""
    value = plan.values[index].val
    if program_summary.kind(value) == "Null":
        return True
    items = [plan.values[i].val.int_val for i in value.items]
    return items == list(range(len(items)))


def _constants(program, buf, plan):
    """{value index: array} of the plan's constant tensors (the constant segment's), which the
    CPU operators above read (an embedding's table)."""
    constant, found = program.constant_segment, {}
    if constant is None or not len(program.segments):
        return found
    _, base = pte_inspect._extended_header(buf)
    start = base + program.segments[constant.segment_index].offset
    for index, value in enumerate(plan.values):
        tensor = value.val
        if program_summary.kind(tensor) != "Tensor" or tensor.data_buffer_idx <= 0 or tensor.allocation_info:
            continue
        dtype, sizes = np.dtype(dtypes.torch_name(tensor.scalar_type)), [int(n) for n in tensor.sizes]
        count = int(np.prod(sizes, dtype=np.int64))
        at = start + constant.offsets[tensor.data_buffer_idx]
        if at + count * dtype.itemsize > len(buf):
            raise BadFile(f"constant tensor {index} runs past the end of the program")
        found[index] = np.frombuffer(buf, dtype, count, at).reshape(sizes).copy()
    return found


def _aliases(plan):
    """{value index: the other tensors at the same planned memory}: ExecuTorch drops a static
    view (an embedding's flattened ids) and lets its result share its input's memory."""
    places = {}
    for index, value in enumerate(plan.values):
        tensor = value.val
        if program_summary.kind(tensor) == "Tensor" and tensor.allocation_info:
            at = tensor.allocation_info
            places.setdefault((at.memory_id, at.memory_offset_low, at.memory_offset_high), []).append(index)
    return {index: [other for other in group if other != index] for group in places.values() for index in group}


def _blob(program, buf, delegate):
    """A delegate's payload: inline in the flatbuffer or in a segment."""
    if program_summary.enum_name(delegate.processed.location) == "INLINE":
        return bytes(program.backend_delegate_data[delegate.processed.index].data)
    _, base = pte_inspect._extended_header(buf)
    segment = program.segments[delegate.processed.index]
    return bytes(buf[base + segment.offset:base + segment.offset + segment.size])


def _graph(method, delegate, blob, compiled):
    """The TOSA graph to run for a delegate: its blob, or for Ethos-U the graph Vela compiled."""
    if delegate.id == "TOSABackend":
        return blob
    if delegate.id == "EthosUBackend":
        found = compiled.get(hashlib.sha256(blob).hexdigest())
        if found is None:
            raise Unsupported(f"method {method}'s EthosUBackend delegate has no TOSA graph in the lowering's "
                              f"vela_tosa file; build the program again")
        return found
    raise Unsupported(f"method {method} has a {delegate.id} delegate; the tosa_reference runtime runs "
                      f"TOSABackend and EthosUBackend delegates only")


def vela_graphs(path):
    """{blob sha256: TOSA graph} of a `<name>.vela_tosa.json`, each graph checked against its
    sha256; BadFile (one line) for anything else."""
    if os.path.getsize(path) > MAX_GRAPHS_BYTES:
        raise BadFile(f"{path}: over {MAX_GRAPHS_BYTES:,} bytes, not the lowering's TOSA graphs")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("format") != GRAPHS_FORMAT or not isinstance(data.get("graphs"), dict):
            raise ValueError(f"not a {GRAPHS_FORMAT} file")
        graphs = {}
        for blob, entry in data["graphs"].items():
            graph = base64.b64decode(entry["tosa_base64"], validate=True)
            if hashlib.sha256(graph).hexdigest() != entry["tosa_sha256"]:
                raise ValueError(f"the graph of blob {str(blob)[:16]} does not have its sha256")
            graphs[blob] = graph
        return graphs
    except (ValueError, TypeError, KeyError, AttributeError, binascii.Error, UnicodeDecodeError) as e:
        raise BadFile(f"{path}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None


class Method:
    """One method of a .pte, ready to run calls."""

    def __init__(self, pte, method, vela_tosa=None):
        buf = pte_inspect.read_file(pte)
        with pte_inspect.refusing_corrupt(pte):
            program = pte_inspect.read_program(buf)
            plans = [p for p in program.execution_plan if p.name == method]
            if not plans:
                raise Unsupported(f"{pte} has no method {method}")
            self.plan = plans[0]
            self.graphs = []
            compiled = vela_graphs(vela_tosa) if vela_tosa else {}
            for delegate in self.plan.delegates:
                self.graphs.append(_graph(method, delegate, _blob(program, buf, delegate), compiled))
            self.constants, self.aliases = _constants(program, buf, self.plan), _aliases(self.plan)
        self.operators = program_summary.op_names(self.plan)
        if len(self.plan.chains) != 1:
            raise Unsupported(f"method {method} has {len(self.plan.chains)} chains; the tosa_reference runtime runs one")

    def _values(self, feed):
        values = dict(self.constants)
        for index, value in enumerate(self.plan.values):
            kind = program_summary.kind(value.val)
            if kind in _SCALARS:
                values[index] = getattr(value.val, _SCALARS[kind])
            elif kind == "Null":
                values[index] = None
        if len(feed) != len(self.plan.inputs):
            raise Unsupported(f"the call feeds {len(feed)} inputs, the method takes {len(self.plan.inputs)}")
        for index, given in zip(self.plan.inputs, feed):
            values[index] = given.array if isinstance(given, value_file.Tensor) else np.asarray(given)
        return values

    def _delegate(self, graph, args, values):
        import tosa_reference_model

        inputs = [values[a] for a in args if a in values]
        outputs = [a for a in args if a not in values]
        results, status = tosa_reference_model.run(graph, inputs)
        if status != tosa_reference_model.GraphStatus.TOSA_VALID or len(results) != len(outputs):
            raise Unsupported(f"the TOSA reference model gave {status.name} and {len(results)} outputs for "
                              f"{len(outputs)} expected")
        values.update(zip(outputs, results))

    def _read(self, index, values):
        """A value the plan computed, or one it reads through a view ExecuTorch dropped."""
        if index in values:
            return values[index]
        tensor = self.plan.values[index].val
        for other in self.aliases.get(index, []):
            if other in values and values[other].size == int(np.prod(list(tensor.sizes), dtype=np.int64)):
                return _shaped(values[other], tensor)
        raise Unsupported(f"value {index} is read before the method computes it")

    def _shaped_kernel(self, name, args):
        """Whether SHAPED runs the operator: a dim-order copy only to the default layout."""
        if name not in SHAPED:
            return False
        # args end with out twice (the argument and the result): dim_order is third from the end.
        return name != "dim_order_ops::_to_dim_order_copy.out" or _default_order(self.plan, args[-3])

    def call(self, feed):
        """The method's outputs (numpy arrays) for the inputs in feed."""
        values = self._values(feed)
        for instruction in self.plan.chains[0].instructions:
            step = instruction.instr_args
            kind, args = program_summary.kind(step), list(step.args)
            if kind == "DelegateCall":
                self._delegate(self.graphs[step.delegate_index], args, values)
            elif kind == "KernelCall" and self.operators[step.op_index] in KERNELS:
                function, taken = KERNELS[self.operators[step.op_index]]
                values[args[-1]] = function(*[values[a] for a in args[:taken]])
            elif kind == "KernelCall" and self._shaped_kernel(self.operators[step.op_index], args):
                shaped, count = SHAPED[self.operators[step.op_index]]
                result = shaped(*[self._read(a, values) for a in args[:count]])
                values[args[-1]] = _shaped(result, self.plan.values[args[-1]].val)
            else:
                what = self.operators[step.op_index] if kind == "KernelCall" else kind
                raise Unsupported(f"{what} runs outside the TOSA delegate; the tosa_reference runtime runs only "
                                  f"quantize, dequantize and {', '.join(sorted(SHAPED))} there")
        return [values[index] for index in self.plan.outputs]


def run_calls(config, calls):
    """Each call's outputs (numpy arrays), the calls run in order on the config's .pte."""
    backend_site.activate(list(config.backend_packages))
    method = Method(config.pte, config.method, config.program_files.get("vela_tosa"))
    return [method.call(call.feed) for call in calls]
