"""The ModelBundle action: programs -> a folder of files named by their sha256, plus index.json.

The model_bundle rule runs it through the exporter (`main.py bundle @params`, a BundleConfig).
`python exporter/actions/model_bundle.py CONFIG.json` runs it directly on a config such as:
  {"label": "//app:bundle", "output": "<folder>",
   "programs": [{"label": "//zoo:mlp_pte", "kind": "pte", "file": "...", "manifest": "..."}]}
The folder then holds `<sha256>.pte` (or .pt2) per distinct program and index.json:
  {"format": "rules_torch_export/bundle-index/1", "label": "//app:bundle",
   "programs": {"//zoo:mlp_pte": {"file": "<sha256>.pte", "sha256": ..., "size": ..., ...}}}
A program with external weights ("ptd": its .ptd) also gets `<sha256>.ptd`, named in its
entry's "ptd" (programs that share a foundation's .ptd name the same file, stored once, and
their entries carry the manifest's "foundation" record); an llm_program ("tokenizer": {"file", "manifest"}) gets its tokenizer as
`<sha256>` plus the file's own suffix (.json, .model), named in its entry's "tokenizer". Equal
files are stored once. Everything is sorted, so the folder's bytes depend only on the programs.
"""

import json
import os
import shutil
import sys

INDEX_FORMAT = "rules_torch_export/bundle-index/1"

# Manifest fields copied into the index, per kind: what an app needs to pick a program. A
# manifest has "backend_packages" (the backends' options and packages, and whether the program
# is per machine) and "method_backends" only when they say something, so other indexes keep their bytes.
_METADATA = {
    "pte": ("backend_packages", "backends", "exported", "foundation", "method_backends", "methods", "toolchain"),
    "pt2": ("model", "input_specs", "output_specs", "range_constraints", "toolchain"),
}


class BundleError(Exception):
    """A program does not match its manifest: the build's inputs are corrupt."""


def index_entry(program, sha256_file):
    """The index record of one program; checks the file against its manifest's digest."""
    with open(program["manifest"], encoding="utf-8") as f:
        manifest = json.load(f)
    kind = program["kind"]
    digest = sha256_file(program["file"])
    recorded = manifest.get(kind, {}).get("sha256")
    if recorded != digest:
        raise BundleError(
            f"{program['label']}: {os.path.basename(program['file'])} has sha256 {digest}, but "
            f"its manifest records {recorded}; rebuild it (bazel clean, or check the cache)"
        )
    entry = {
        "file": f"{digest}.{kind}",
        "kind": kind,
        "sha256": digest,
        "size": os.path.getsize(program["file"]),
    }
    entry.update({key: manifest[key] for key in _METADATA[kind] if key in manifest})
    if program.get("ptd"):  # external weights, checked and named like the program
        weights = sha256_file(program["ptd"])
        if manifest.get("ptd", {}).get("sha256") != weights:
            raise BundleError(f"{program['label']}: {os.path.basename(program['ptd'])} has sha256 "
                              f"{weights}, but its manifest records another; rebuild it")
        entry["ptd"] = {"file": f"{weights}.ptd", "sha256": weights, "size": os.path.getsize(program["ptd"])}
    if program.get("tokenizer"):
        entry["tokenizer"] = _tokenizer_entry(program, sha256_file)
    return entry


def _tokenizer_entry(program, sha256_file):
    """The index record of an llm_program's tokenizer, checked against its manifest."""
    path = program["tokenizer"]["file"]
    with open(program["tokenizer"]["manifest"], encoding="utf-8") as f:
        recorded = json.load(f)
    digest = sha256_file(path)
    if recorded["file"]["sha256"] != digest:
        raise BundleError(f"{program['label']}: its tokenizer {os.path.basename(path)} has sha256 {digest}, but "
                          f"the tokenizer's manifest records another; rebuild it")
    return {"file": digest + os.path.splitext(path)[1], "sha256": digest, "size": os.path.getsize(path),
            "format": recorded["tokenizer_format"], "bos_id": recorded["bos_id"], "eos_ids": recorded["eos_ids"]}


def build(config, sha256_file):
    """Fills config["output"] with the digest-named programs and index.json."""
    from exporter.core import atomic

    out = config["output"]
    atomic.made_folder(out)
    entries = {}
    for program in sorted(config["programs"], key=lambda p: p["label"]):
        entry = index_entry(program, sha256_file)
        copies = [(program["file"], entry["file"])]
        if "ptd" in entry:
            copies.append((program["ptd"], entry["ptd"]["file"]))
        if "tokenizer" in entry:
            copies.append((program["tokenizer"]["file"], entry["tokenizer"]["file"]))
        for source, name in copies:
            target = os.path.join(out, name)
            if not os.path.exists(target):  # equal files (shared weights) are stored once
                shutil.copyfile(source, target)  # contents only: no times, no modes
        entries[program["label"]] = entry
    index = {"format": INDEX_FORMAT, "label": config["label"], "programs": entries}
    with open(os.path.join(out, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=2, sort_keys=True)
        f.write("\n")
    return index


def run(config):
    """Runs the action for a BundleConfig."""
    from exporter.core import manifest
    from exporter.core.errors import UserError

    try:
        build({"label": config.label, "output": config.outputs["bundle"], "programs": config.programs},
              manifest.sha256_file)
    except BundleError as e:
        raise UserError(str(e)) from e


def main(argv):
    from exporter.core import manifest

    if len(argv) != 1:
        sys.stderr.write(f"usage: model_bundle.py CONFIG.json, got {argv}\n")
        return 2
    with open(argv[0], encoding="utf-8") as f:
        config = json.load(f)
    try:
        build(config, manifest.sha256_file)
    except BundleError as e:
        sys.stderr.write(f"ERROR: {config['label']}: {e}\n")
        shutil.rmtree(config["output"], ignore_errors=True)
        return 1
    return 0


if __name__ == "__main__":
    # Run by path like exporter/main.py: make `exporter` importable as a package.
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main(sys.argv[1:]))
