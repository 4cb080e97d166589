"""The runner behind bundled_program_test: a .bpte's test cases in the ExecuTorch runtime (run, on
a contract.BundledCasesConfig).

It does what a device farm does with a .bpte: ExecuTorch's bundled-program API loads each
case's inputs into the method, runs it, and compares the outputs with the bundled expected
ones (BundledModule.verify_result_with_bundled_expected_output; |actual - expected| <= atol +
rtol * |expected|, as torch.allclose). The cases are read from the .bpte itself with
pte_schema's reader, so the test sees what the device sees; the manifest only names them. Each
case's worst errors are printed, from the outputs the runtime returned (or, for a case the
runtime refused, from running its inputs again through the module API).

run(config) is check(config), a Result of every case, then render(config, result), its report.
"""

import dataclasses
import json
import os
import sys

import torch

from exporter.checks import contract, numerics
from exporter.core import dtypes
from exporter.core.errors import BadFile
from exporter.formats import program_summary, pte_inspect, pte_schema


def _bundle_schema():
    """ExecuTorch's bundled_program_schema.fbs, beside the installed program.fbs."""
    program_fbs = pte_schema.executorch_schema_path()
    root = program_fbs[:program_fbs.rindex("/executorch/") + len("/executorch/")]
    return pte_schema.Schema(os.path.join(root, "devtools/bundled_program/serialize/bundled_program_schema.fbs"))


_SCALARS = {"Int": lambda v: v.int_val, "Bool": lambda v: v.bool_val, "Double": lambda v: v.double_val}


def _value(value):
    """A bundled Value as the runtime takes it: a tensor (contiguous, as bundled), or a scalar."""
    val = value.val
    if val is None:
        raise pte_schema.Corrupt("a bundled value has no type")
    kind = program_summary.kind(val)
    if kind != "Tensor":
        return _SCALARS[kind](val)
    name = dtypes.torch_name(val.scalar_type)
    dtype = getattr(torch, name, None)
    sizes = list(val.sizes)
    data = val.data.raw()
    numel = 1
    for size in sizes:
        numel *= size
    if not isinstance(dtype, torch.dtype) or min(sizes, default=0) < 0 or numel * dtype.itemsize != len(data):
        raise pte_schema.Corrupt(f"a bundled tensor of {name}{sizes} holds {len(data)} bytes")
    if not data:
        return torch.empty(sizes, dtype=dtype)
    return torch.frombuffer(bytearray(data), dtype=dtype).reshape(sizes)


def read_cases(buf):
    """{method: [(inputs, expected outputs)]}, as the .bpte holds them."""
    root = pte_schema.read_root(_bundle_schema(), buf)
    return {
        suite.method_name: [([_value(v) for v in case.inputs], [_value(v) for v in case.expected_outputs])
                            for case in suite.test_cases]
        for suite in root.method_test_suites
    }


def parse_bundle(buf, path):
    """({method: [(inputs, expected outputs)]}, the program's bytes) of a .bpte's bytes `buf`; a
    corrupt one raises BadFile naming `path`."""
    with pte_inspect.refusing_corrupt(path):
        return read_cases(buf), pte_schema.read_root(_bundle_schema(), buf).program.raw()


def read_bundle(path):
    """parse_bundle of the .bpte at path."""
    return parse_bundle(pte_inspect.read_file(path), path)


def verify_program(program, path, ptd=None):
    """Loads the .bpte's program with the runtime's full verification (InternalConsistency) and,
    if it has one, checks its .ptd: ExecuTorch's bundled-program loader verifies neither."""
    from executorch.runtime import Runtime, Verification

    if ptd:
        pte_inspect.summarize_ptd(ptd)  # raises BadFile for a corrupt one
    try:
        Runtime.get().load_program(program, verification=Verification.InternalConsistency)
    except RuntimeError as e:
        raise BadFile(f"{path}: its program fails the runtime's verification: {str(e).splitlines()[0]}") from None


def _describe(tensors):
    return ", ".join(f"{str(t.dtype).replace('torch.', '')}[{', '.join(map(str, t.shape))}]"
                     if isinstance(t, torch.Tensor) else repr(t) for t in tensors)


def _verify_with_weights(module, method, inputs, expected, rtol, atol):
    """(ok, actual outputs) of one case of a program whose weights are in a .ptd.

    ExecuTorch 1.5.1's Python BundledModule verifies a case only on the program it loads itself,
    without a data map (it crashes on a program whose weights are in a .ptd), so the case runs
    on the module loaded from the bundle with the .ptd, and is judged as the runtime's check
    judges it: |actual - expected| <= atol + rtol * |expected| for every output.
    """
    actual = module.run_method(method, [v.clone() if isinstance(v, torch.Tensor) else v for v in inputs])
    ok = len(actual) == len(expected) and all(
        numerics.compare(a, e, rtol, atol)[0] if isinstance(e, torch.Tensor) else a == e
        for a, e in zip(actual, expected))
    return ok, actual


@dataclasses.dataclass(frozen=True)
class Case:
    """One bundled case, run: its name, inputs, verdict and each output against the bundled one."""

    name: str  # "forward case 0 (batch=2)"
    inputs: str  # the inputs, described
    ok: bool
    verdict: str  # "ok", or why the case failed
    outputs: tuple = ()  # each output against the expected one, as numerics.compare says
    rerun_error: str = ""  # a refused case that failed again when run through the module API


@dataclasses.dataclass(frozen=True)
class Result:
    """What a bundled_program_test found, before it is rendered."""

    program: str  # the program's label, from the bundle's manifest
    rtol: float
    atol: float
    weights: str  # the .ptd the cases ran with, or ""
    cases: tuple  # Case

    @property
    def ok(self):
        return bool(self.cases) and all(case.ok for case in self.cases)


def _case_name(method, index, described):
    sizes = described[index]["sizes"] if index < len(described) else {}
    return f"{method} case {index} ({', '.join(f'{k}={v}' for k, v in sizes.items()) or 'static shapes'})"


class _Runner:
    """Runs cases the way the device does: the bundle's own check, or for a program whose weights
    are in a .ptd, the module loaded with them."""

    def __init__(self, buf, ptd, rtol, atol):
        from executorch.extension.pybindings.portable_lib import _load_bundled_program_from_buffer

        self.bundle = _load_bundled_program_from_buffer(buf)
        self.ptd, self.rtol, self.atol, self._module = ptd, rtol, atol, None
        if ptd:  # by path: with data_map_buffer, the module keeps a pointer into bytes it does not own
            self.module()

    def module(self):
        from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_bundled_program

        if self._module is None:
            self._module = _load_for_executorch_from_bundled_program(self.bundle, **({"data_path": self.ptd} if self.ptd else {}))
        return self._module

    def run(self, method, index, name, inputs, expected):
        """The Case of one bundled case."""
        rerun_error = ""
        if self.ptd:
            ok, actual = _verify_with_weights(self.module(), method, inputs, expected, self.rtol, self.atol)
            verdict = "ok" if ok else "FAIL, an output is outside the tolerances"
        else:
            try:
                ok, verdict = True, "ok"
                actual = self.bundle.verify_result_with_bundled_expected_output(method, index, self.rtol, self.atol)
            except RuntimeError as e:
                ok, verdict = False, f"FAIL, the runtime's check failed: {str(e).splitlines()[0]}"
                try:
                    actual = self.module().run_method(method, [v.clone() if isinstance(v, torch.Tensor) else v for v in inputs])
                except RuntimeError as run_error:
                    actual, rerun_error = [], str(run_error).splitlines()[0]
        outputs = tuple(numerics.compare(a, e, self.rtol, self.atol)[1] for a, e in zip(actual, expected))
        return Case(name, _describe(inputs), ok, verdict, outputs, rerun_error)


def check(config):
    """The Result of a contract.BundledCasesConfig: every bundled case, run."""
    with open(config.manifest, encoding="utf-8") as f:
        manifest = json.load(f)
    buf = pte_inspect.read_file(config.bpte)
    rtol, atol = numerics.tolerances(config)
    bundled, program = parse_bundle(buf, config.bpte)  # the bytes checked are the bytes loaded
    verify_program(program, config.bpte, config.ptd)
    runner = _Runner(buf, config.ptd, rtol, atol)
    cases = []
    for method, method_cases in sorted(bundled.items()):
        described = manifest["methods"].get(method, {}).get("cases", [])
        for index, (inputs, expected) in enumerate(method_cases):
            cases.append(runner.run(method, index, _case_name(method, index, described), inputs, expected))
    weights = os.path.basename(config.ptd) if config.ptd else ""
    return Result(manifest["program"]["label"], rtol, atol, weights, tuple(cases))


def render(config, result):
    """The report text of a Result."""
    weights = f", weights from {result.weights}" if result.weights else ""
    lines = [f"{config.label}: {config.bundle} ({result.program}) in the ExecuTorch runtime, "
             f"{len(result.cases)} bundled cases (rtol {result.rtol:g}, atol {result.atol:g}{weights})"]
    if not result.cases:
        lines.append("  FAIL: the .bpte holds no test case; give the bundled_program inputs")
    for case in result.cases:
        lines.append(f"  {case.name}: inputs {case.inputs}")
        if case.rerun_error:
            lines.append(f"  {case.name}: {case.verdict}; running it again failed: {case.rerun_error}")
            continue
        lines += [f"  {case.name}: output {i} {text}" for i, text in enumerate(case.outputs)]
        lines.append(f"  {case.name}: {case.verdict}")
    if not result.ok:
        lines.append(f"The device would fail these cases too. If the difference is expected, set rtol/atol on "
                     f"{config.label}; otherwise the .pte does not compute what its reference computed.")
    return "\n".join(lines) + "\n"


def run(config):
    """(ok, report text) of a contract.BundledCasesConfig."""
    result = check(config)
    return result.ok, render(config, result)


def main(argv):
    return contract.main(argv, contract.BundledCasesConfig, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
