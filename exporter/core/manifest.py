"""Manifests: the JSON files beside each .pt2 and .pte that record digests and metadata."""

import collections
import hashlib
import json
import os

from exporter.core import atomic, operators


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_record(path):
    return {"sha256": sha256_file(path), "size": os.path.getsize(path)}


def write_json(path, data):
    """Writes canonical JSON (sorted keys, fixed indent, trailing newline) atomically."""
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    atomic.write_bytes(path, text.encode("utf-8"))


def toolchain_record(identity_path):
    """The toolchain's identity: its file's digest and the versions that matter most."""
    versions = {}
    with open(identity_path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("python "):
                versions["python"] = line.split()[1]
            name, sep, version = line.partition("==")
            if sep and name in ("torch", "executorch"):
                versions[name] = version
    return {"identity_sha256": sha256_file(identity_path), **versions}


def source_path(path):
    """A file's path as the user knows it: generated files lose their bazel-out/<config>/bin/.

    Manifests then read the same in every output configuration (fastbuild, opt, ...), and
    their bytes do not depend on how the build was configured.
    """
    parts = path.split("/")
    if len(parts) > 3 and parts[0] == "bazel-out" and parts[2] == "bin":
        return "/".join(parts[3:])
    return path


def canonical_digest(value):
    """sha256 of a JSON value in canonical form (sorted keys, no whitespace)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _settings(config):
    """The config minus its outputs, with generated-file paths made configuration-neutral."""

    def neutral(value):
        if isinstance(value, str):
            return source_path(value)
        if isinstance(value, dict):
            return {k: neutral(v) for k, v in value.items()}
        if isinstance(value, list):
            return [neutral(v) for v in value]
        return value

    return neutral({k: v for k, v in config.items() if k != "outputs"})


def inputs_record(config):
    """sha256 of everything that produced an output; equal inputs give equal records.

    An export records its model sources, checkpoint and shape spec; a lowering records the
    .pt2 it read (its own sources are already folded into that file). Both record the
    toolchain's identity and a digest of the whole config but its outputs ("settings": label,
    entry, backends, input paths...). Paths are workspace-relative, so the record is the same
    in every checkout and every output configuration.
    """
    record = {
        "settings": canonical_digest(_settings(config)),
        "toolchain_identity": sha256_file(config["identity"]),
    }
    model = config.get("model")
    if model:
        record["sources"] = {
            source_path(path): sha256_file(path) for path in sorted(model.get("srcs", []))
        }
        if model.get("checkpoint"):
            record["checkpoint"] = sha256_file(model["checkpoint"])
        if model.get("checkpoint_files"):  # a checkpoint folder: each file by name
            record["checkpoint_files"] = {os.path.basename(p): sha256_file(p) for p in sorted(model["checkpoint_files"])}
        adapter = model.get("lora")
        if adapter:  # a lora_model's factors: its file, or each file of its folder by name
            files = adapter.get("checkpoint_files") or [adapter["checkpoint"]]
            record["lora_checkpoint"] = {os.path.basename(p): sha256_file(p) for p in sorted(files)}
    if config.get("srcs") or config.get("files"):  # a calibration_data's code and data
        paths = sorted(set(config.get("srcs", [])) | set(config.get("files", [])))
        record["sources"] = {source_path(path): sha256_file(path) for path in paths}
    if "spec" in config:
        record["spec"] = canonical_digest(config["spec"])
    if config.get("pt2"):
        record["pt2"] = sha256_file(config["pt2"])
    if config.get("methods"):  # a program of several methods
        record["pt2"] = {name: sha256_file(m["pt2"]) for name, m in sorted(config["methods"].items())}
    if config.get("calibration"):
        record["calibration"] = sha256_file(config["calibration"]["batches"])
    return record


def operator_histogram(graph_modules):
    """Counts call_function targets across the given torch.fx GraphModules."""
    counts = collections.Counter()
    for gm in graph_modules:
        for node in gm.graph.nodes:
            if node.op == "call_function":
                counts[operators.name(node.target)] += 1
    return dict(sorted(counts.items()))
