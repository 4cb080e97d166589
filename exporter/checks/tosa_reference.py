"""numerics_test's runtime "tosa_reference" (docs/backends.md, "Arm"): a TOSA program's method
run without a TOSA device. Its delegates' TOSA graphs (the TOSABackend blobs, as the lowering
wrote them) run in the TOSA reference model (tosa-tools' tosa_reference_model), and the int8
programs' quantize and dequantize operators outside them in numpy, as ExecuTorch's quantized
kernels compute them (float32 arithmetic, round half to even). Any other operator, instruction
or delegate fails the run in one line: this is a reference of the delegate, not a runtime.
"""

import numpy as np

from exporter.core import backend_site
from exporter.formats import program_summary, pte_inspect, value_file

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


def _blob(program, buf, delegate):
    """A delegate's payload: inline in the flatbuffer or in a segment."""
    if program_summary.enum_name(delegate.processed.location) == "INLINE":
        return bytes(program.backend_delegate_data[delegate.processed.index].data)
    _, base = pte_inspect._extended_header(buf)
    segment = program.segments[delegate.processed.index]
    return bytes(buf[base + segment.offset:base + segment.offset + segment.size])


class Method:
    """One method of a .pte, ready to run calls."""

    def __init__(self, pte, method):
        buf = pte_inspect.read_file(pte)
        with pte_inspect.refusing_corrupt(pte):
            program = pte_inspect.read_program(buf)
            plans = [p for p in program.execution_plan if p.name == method]
            if not plans:
                raise Unsupported(f"{pte} has no method {method}")
            self.plan = plans[0]
            self.graphs = []
            for delegate in self.plan.delegates:
                if delegate.id != "TOSABackend":
                    raise Unsupported(f"method {method} has a {delegate.id} delegate; the tosa_reference runtime "
                                      f"runs TOSABackend delegates only")
                self.graphs.append(_blob(program, buf, delegate))
        self.operators = program_summary.op_names(self.plan)
        if len(self.plan.chains) != 1:
            raise Unsupported(f"method {method} has {len(self.plan.chains)} chains; the tosa_reference runtime runs one")

    def _values(self, feed):
        values = {}
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
            else:
                what = self.operators[step.op_index] if kind == "KernelCall" else kind
                raise Unsupported(f"{what} runs outside the TOSA delegate; the tosa_reference runtime runs only "
                                  f"quantize and dequantize there")
        return [values[index] for index in self.plan.outputs]


def run_calls(config, calls):
    """Each call's outputs (numpy arrays), the calls run in order on the config's .pte."""
    backend_site.activate(list(config.backend_packages))
    method = Method(config.pte, config.method)
    return [method.call(call.feed) for call in calls]
