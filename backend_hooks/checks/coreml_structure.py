"""Core ML's reader for delegate_structure_test (exporter/checks/delegate_structure.py): each Core
ML delegate unflattens, with ExecuTorch's own executorchcoreml, into a model package that
coremltools' reader loads; its inputs' largest shapes and its outputs are the model's (a Core ML
input with a dynamic dim gives its range's upper bound). The delegate's weights and numerics are
not checked: Core ML runs on Apple hardware only."""

import functools
import glob
import importlib.util
import os
import sys
import tempfile

KIND = "model package"
LOADER = "coremltools"


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


def read(payload):
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
