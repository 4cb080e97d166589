"""Each backend's partitioner, built from its options (core/backends.py), and what the lowering
changes in a backend's own code while it runs, so that its bytes are what the options say and
the same on every run:

- OpenVINO: ExecuTorch's OpenvinoBackend passes compile specs to openvino_compile as strings, so
  no spec can carry OpenVINO's config; the lowering hands it the precision hint
  (INFERENCE_PRECISION_HINT) itself.
- Core ML: ExecuTorch names each delegate `executorch_<uuid4>`, and coremltools' model package
  names its items by random UUIDs (Manifest.json): both become UUIDs derived from the package's
  own bytes (same model, same name; the Core ML runtime caches compiled models by that name).
"""

import contextlib
import hashlib
import json
import os
import uuid
from collections.abc import Callable
from typing import Any

from exporter.core.backends import BACKENDS, OPTION_CLASSES, BackendOptions, CoremlOptions, OpenvinoOptions
from exporter.core.errors import UserError


def _xnnpack(_options):
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    return XnnpackPartitioner()


def _openvino(options: OpenvinoOptions):
    from executorch.backends.openvino.partitioner import OpenvinoPartitioner
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    return OpenvinoPartitioner([CompileSpec("device", options.device.encode())])


def _coreml(options: CoremlOptions):
    import coremltools as ct
    from executorch.backends.apple.coreml.compiler import CoreMLBackend
    from executorch.backends.apple.coreml.partition import CoreMLPartitioner

    specs = CoreMLBackend.generate_compile_specs(
        compute_unit=ct.ComputeUnit[options.compute_units.upper()],
        minimum_deployment_target=ct.target[options.minimum_deployment_target],
        compute_precision=ct.precision.FLOAT16 if options.precision == "fp16" else ct.precision.FLOAT32,
    )
    return CoreMLPartitioner(compile_specs=specs)


# Each takes its backend's options (None for XNNPACK, which has none).
_BUILDERS: dict[str, Callable[[Any], Any]] = {"xnnpack": _xnnpack, "openvino": _openvino, "coreml": _coreml}


def partitioners(backends, options: BackendOptions | None = None):
    """The partitioners of `backends` (names), each with its options (defaults where none)."""
    options = options or BackendOptions()
    found = []
    for backend in backends:
        if backend not in _BUILDERS:  # the rule checks backends at analysis; this guards CLI use
            raise UserError(f"unknown backend {backend!r}; `backends` takes {list(BACKENDS)} or []")
        own = getattr(options, backend, None)
        if own is None and backend in OPTION_CLASSES:
            own = OPTION_CLASSES[backend]()
        found.append(_BUILDERS[backend](own))
    return found


@contextlib.contextmanager
def backend_patches(backends, options: BackendOptions | None = None):
    """While a lowering for `backends` runs: OpenVINO's precision hint, Core ML's stable names."""
    options = options or BackendOptions()
    with contextlib.ExitStack() as stack:
        if "openvino" in backends:
            stack.enter_context(_openvino_config(options.openvino or OpenvinoOptions()))
        if "coreml" in backends:
            stack.enter_context(_coreml_names())
        yield


@contextlib.contextmanager
def _openvino_config(chosen: OpenvinoOptions):
    from executorch.backends.openvino import preprocess

    original = preprocess.openvino_compile
    precision = chosen.precision

    def compile_with_config(module, *args, options=None, **kwargs):
        given = dict(options or {})
        given["config"] = {"INFERENCE_PRECISION_HINT": precision}
        return original(module, *args, options=given, **kwargs)

    preprocess.openvino_compile = compile_with_config
    try:
        yield
    finally:
        preprocess.openvino_compile = original


class _StableFlattener:
    """executorchcoreml, whose flatten_directory_contents first renames by content."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        return getattr(self._module, name)

    def flatten_directory_contents(self, folder):
        stable_names(folder)
        return self._module.flatten_directory_contents(folder)


@contextlib.contextmanager
def _coreml_names():
    from executorch.backends.apple.coreml.compiler import coreml_preprocess

    original = coreml_preprocess.executorchcoreml
    coreml_preprocess.executorchcoreml = _StableFlattener(original)
    try:
        yield
    finally:
        coreml_preprocess.executorchcoreml = original


_RENAMED = ("metadata.json", "Manifest.json")


def _digest(folder):
    """sha256 of every file's relative path and bytes but the two that carry the names."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if name in _RENAMED:
                continue
            path = os.path.join(root, name)
            digest.update(os.path.relpath(path, folder).encode() + b"\0")
            with open(path, "rb") as f:
                digest.update(hashlib.sha256(f.read()).digest())
    return digest.hexdigest()


def stable_names(folder):
    """Renames a Core ML delegate's folder by its content: metadata.json's identifier and the
    model package's item UUIDs (Manifest.json), each a UUID derived from the package's digest."""
    digest = _digest(folder)
    metadata_path = os.path.join(folder, "metadata.json")
    with open(metadata_path) as f:
        metadata = json.load(f)
    metadata["identifier"] = "executorch_" + str(uuid.UUID(digest[:32]))
    with open(metadata_path, "w") as f:
        f.write(json.dumps(metadata))  # as ExecuTorch writes it: json.dumps of a dataclass
    for root, _, files in os.walk(folder):
        if "Manifest.json" in files:
            _stable_manifest(os.path.join(root, "Manifest.json"), digest)


def _stable_manifest(path, digest):
    with open(path) as f:
        text = f.read()
    manifest = json.loads(text)
    names = {old: str(uuid.UUID(hashlib.sha256(f"{digest}/{item['path']}".encode()).hexdigest()[:32]))
             for old, item in manifest["itemInfoEntries"].items()}
    manifest["itemInfoEntries"] = {names[old]: item for old, item in manifest["itemInfoEntries"].items()}
    manifest["rootModelIdentifier"] = names[manifest["rootModelIdentifier"]]
    with open(path, "w") as f:
        f.write(json.dumps(manifest, indent=4, sort_keys=True) + ("\n" if text.endswith("\n") else ""))


def openvino_targets(data):
    """The CPU instruction sets OpenVINO compiled a program's blobs for, from their headers
    (`meta=1.0;ov=2026.4.1;isa=Intel AVX2`, after its length as 8 bytes, little-endian): the
    blob loads only on a CPU whose best instruction set is the same (docs/backends.md)."""
    found = []
    start = data.find(b"meta=")
    while start >= 8:
        size = int.from_bytes(data[start - 8:start], "little")
        text = data[start:start + size].decode("ascii", "replace") if size < 256 else ""
        fields = dict(part.split("=", 1) for part in text.split(";") if "=" in part)
        if "isa" in fields and fields["isa"] not in found:
            found.append(fields["isa"])
        start = data.find(b"meta=", start + 5)
    return found
