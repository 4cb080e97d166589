"""Manifests: the JSON files beside each .pt2 and .pte that record digests and metadata."""

import collections
import hashlib
import json
import os


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
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


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


def inputs_record(config):
    """sha256 of every input that produced an output: sources, checkpoint, identity."""
    model = config.get("model", {})
    record = {
        "sources": {path: sha256_file(path) for path in sorted(model.get("srcs", []))},
        "toolchain_identity": sha256_file(config["identity"]),
    }
    if model.get("checkpoint"):
        record["checkpoint"] = sha256_file(model["checkpoint"])
    if config.get("pt2"):
        record["pt2"] = sha256_file(config["pt2"])
    record["config"] = hashlib.sha256(
        json.dumps({k: v for k, v in config.items() if k != "outputs"}, sort_keys=True).encode()
    ).hexdigest()
    return record


def operator_histogram(graph_modules):
    """Counts call_function targets across the given torch.fx GraphModules."""
    counts = collections.Counter()
    for gm in graph_modules:
        for node in gm.graph.nodes:
            if node.op == "call_function":
                counts[_op_name(node.target)] += 1
    return dict(sorted(counts.items()))


def _op_name(target):
    if hasattr(target, "_schema"):  # a torch OpOverload prints as "aten.add.Tensor"
        return str(target)
    return f"{getattr(target, '__module__', '')}.{getattr(target, '__qualname__', str(target))}"
