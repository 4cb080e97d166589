"""A Core ML delegate's model package, made the same bytes on every run before ExecuTorch
flattens it into the .pte (coreml.py installs StableFlattener while a lowering runs).

Three sources of difference, found by comparing two lowerings in two processes:
- ExecuTorch names the delegate `executorch_<uuid4>` (metadata.json), and coremltools names the
  package's items by random UUIDs (Manifest.json): both become UUIDs derived from the package's
  own bytes (same model, same name; the Core ML runtime caches compiled models by that name);
- coremltools writes model.mlmodel with protobuf's default serialisation, whose map fields (an
  operation's inputs, the user metadata) come out in an order that changes from process to
  process: it is written again with `deterministic=True`;
- the user metadata holds `com.github.apple.coremltools.conversion_date`, the day of the lowering:
  removed.
"""

import hashlib
import json
import os
import uuid

CONVERSION_DATE = "com.github.apple.coremltools.conversion_date"


def deterministic_spec(path):
    """Writes the model.mlmodel at `path` again with sorted map fields and no conversion date."""
    from coremltools.proto import Model_pb2

    spec = Model_pb2.Model()
    with open(path, "rb") as f:
        spec.ParseFromString(f.read())
    spec.description.metadata.userDefined.pop(CONVERSION_DATE, None)
    with open(path, "wb") as f:
        f.write(spec.SerializeToString(deterministic=True))


class StableFlattener:
    """executorchcoreml, whose flatten_directory_contents first renames by content."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        return getattr(self._module, name)

    def flatten_directory_contents(self, folder):
        stable_names(folder)
        return self._module.flatten_directory_contents(folder)


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
    model package's item UUIDs (Manifest.json), each a UUID derived from the package's digest;
    its model.mlmodel files first get deterministic bytes."""
    for root, _, files in os.walk(folder):
        if "model.mlmodel" in files:
            deterministic_spec(os.path.join(root, "model.mlmodel"))
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
