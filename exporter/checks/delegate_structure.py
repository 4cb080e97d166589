"""The runner behind delegate_structure_test: what can be checked of a program that no runtime of
this machine runs (run, on a contract.DelegateStructureConfig).

Core ML: each method's Core ML delegates unflatten, with ExecuTorch's own executorchcoreml, into
a model package that coremltools' reader loads, and a method that one delegate runs whole has the
delegate's inputs and outputs: as many, and each input's largest shape the method's (the .pte's
sizes are upper bounds; a Core ML input with a dynamic dim gives its range's upper bound). The
delegate's weights and numerics are not checked: Core ML runs on Apple hardware only.

run(config) is check(config), one Finding per delegate, then render(config, findings).
"""

import dataclasses
import functools
import glob
import importlib.util
import os
import sys
import tempfile

from exporter.checks import contract
from exporter.formats import program_summary, pte_inspect

COREML_ID = "CoreMLBackend"


@dataclasses.dataclass(frozen=True)
class Finding:
    """One Core ML delegate: its method, its inputs' and outputs' shapes, and what is wrong."""

    method: str
    inputs: list
    outputs: list
    problem: str | None = None


def _shape(feature):
    """A Core ML feature's largest shape: its range's upper bounds, else its shape ([] if none)."""
    array = feature.type.multiArrayType
    ranges = array.shapeRange.sizeRanges
    return [r.upperBound for r in ranges] if ranges else list(array.shape)


@functools.cache
def _coremltools_parts():
    """(Model_pb2, ModelPackage): the two parts of coremltools that ct.utils.load_spec uses on a
    model package, its protobuf schema and its libmodelpackage, loaded from coremltools' folder
    without its __init__, which imports torch and every converter (14 s of CPU here, 0.3 s so)."""
    found = importlib.util.find_spec("coremltools")
    if found is None or not found.submodule_search_locations:
        raise ValueError("coremltools is not installed; it comes with ExecuTorch's wheel, in the toolchain's lock")
    root = found.submodule_search_locations[0]
    proto = _load("coremltools_proto", os.path.join(root, "proto", "__init__.py"), os.path.join(root, "proto"))
    package = _load("libmodelpackage", glob.glob(os.path.join(root, "libmodelpackage*.so"))[0])
    return proto.Model_pb2, package.ModelPackage


def _load(name, path, folder=None):
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=[folder] if folder else None)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def model_package(payload):
    """(input shapes, output shapes) of a Core ML delegate's model package, read as coremltools'
    load_spec reads it: the package's root model, from its manifest, parsed as a Model."""
    from executorch.backends.apple.coreml import executorchcoreml

    model_pb2, package = _coremltools_parts()
    with tempfile.TemporaryDirectory(prefix="coreml-") as folder:
        if not executorchcoreml.unflatten_directory_contents(payload, folder):
            raise ValueError("ExecuTorch's executorchcoreml cannot unflatten it")
        spec = model_pb2.Model()
        with open(package(f"{folder}/lowered_module/model.mlpackage").getRootModel().path(), "rb") as f:
            spec.ParseFromString(f.read())
    return [_shape(f) for f in spec.description.input], [_shape(f) for f in spec.description.output]


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


def _finding(method_name, method, payload):
    try:
        inputs, outputs = model_package(payload)
    except Exception as e:  # noqa: BLE001 (coremltools' and ExecuTorch's errors share no class)
        return Finding(method_name, [], [], f"is not a model package coremltools loads ({type(e).__name__}: {e})")
    whole = method["delegates"][COREML_ID]["count"] == 1 and not method["operators"]  # nothing outside it
    return Finding(method_name, inputs, outputs, _mismatch(method, inputs, outputs) if whole else None)


def check(config):
    """One Finding per Core ML delegate of the program; [] when it has none."""
    data = pte_inspect.read_file(config.pte)
    with pte_inspect.refusing_corrupt(config.pte):
        program = pte_inspect.read_program(data)
        methods = program_summary.methods(program)
        found = payloads(data, program, COREML_ID)
    return [_finding(name, methods[name], payload) for name, each in found.items() for payload in each]


def render(config, findings):
    if not findings:
        return False, (f"{config.label}: {config.program} has no Core ML delegate; "
                       "lower it with backends = [coreml(...)] or remove this test\n")
    lines = [f"{config.label}: {config.program}: method {f.method}'s Core ML delegate {f.problem}\n"
             for f in findings if f.problem]
    if lines:
        return False, "".join(lines)
    return True, "".join(f"{config.program}: method {f.method}: a Core ML model package, inputs {f.inputs}, "
                         f"outputs {f.outputs}\n" for f in findings)


def run(config):
    return render(config, check(config))


def main(argv):
    return contract.main(argv, contract.DelegateStructureConfig, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
