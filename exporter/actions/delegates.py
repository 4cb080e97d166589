"""What a lowering takes from each backend's hooks module (backend_hooks/<name>.py, named by its record
in core/backends.py): its partitioner, built from its options, the patches its lowering needs so
that its bytes are what the options say and the same on every run, and what its lowering action
records. Nothing here names a backend.
"""

import contextlib
import importlib

from exporter.core import backends
from exporter.core.backends import BackendOptions
from exporter.core.errors import UserError


def hooks(name):
    """Backend `name`'s hooks module (UserError for a name no record has)."""
    return importlib.import_module(backends.record(name).hooks)


def partitioners(names, options: BackendOptions | None = None):
    """The partitioners of the backends `names`, each with its options (defaults where none);
    a backend that delegates nothing gives none."""
    found = [hooks(name).partitioner(backends.options_of(options, name)) for name in names]
    return [p for p in found if p is not None]


def _hook(name, hook):
    return getattr(hooks(name), hook, None)


@contextlib.contextmanager
def backend_patches(names, options: BackendOptions | None = None):
    """While a lowering for the backends `names` runs: each one's patches (its hooks')."""
    with contextlib.ExitStack() as stack:
        for name in names:
            patches = _hook(name, "patches")
            if patches:
                stack.enter_context(patches(backends.options_of(options, name)))
        yield


@contextlib.contextmanager
def recording(names):
    """While the lowering action runs: what each backend's hooks keep of it, in the dict yielded."""
    found: dict = {}
    with contextlib.ExitStack() as stack:
        for name in names:
            record = _hook(name, "recording")
            if record:
                stack.enter_context(record(found))
        yield found


def manifest_records(names, found):
    """{manifest key: value} of what the backends' hooks recorded; {} when they recorded nothing."""
    merged: dict = {}
    for name in names:
        record = _hook(name, "manifest_record")
        if record:
            merged.update(record(found))
    return merged


def write_outputs(names, found, outputs, label):
    """Writes the files the backends' records declare (their `outputs`) from what they recorded."""
    for name in names:
        write = _hook(name, "write_outputs")
        if write and set(backends.record(name).outputs) & set(outputs):
            write(found, outputs, label)


def _is_quantized(program):
    """Whether a PT2E quantization left its quantize/dequantize operators in the program."""
    return any(node.op == "call_function" and "quantized_decomposed" in str(node.target)
               for node in program.graph.nodes)


def check_quantized(programs, method_backends, options: BackendOptions | None, where):
    """Fails in one line when a float method is lowered for a backend that runs integer
    operators only (its record's integer_only): its partitioner would leave every operator on the
    CPU and say nothing (measured).

    programs: {method: ExportedProgram}; method_backends: {method: backend names}; where: a
    function of the method's name that gives the message's prefix (the program and its export).
    """
    for method, program in programs.items():
        for name in method_backends[method]:
            record = backends.record(name)
            if record.integer_only_with(backends.options_of(options, name)) and not _is_quantized(program):
                quantizer = name if record.quantizer else "xnnpack"
                raise UserError(f"{where(method)} is not quantized, and {name} runs integer operators only; "
                                f"quantize it with torch_quantize(quantizer = \"{quantizer}\") and lower that")
