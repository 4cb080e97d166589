"""Summarises a .pte without running it: methods, operators, delegates, sizes, planned memory.

    python -m exporter.formats.pte_inspect model.pte [--json] [--manifest model.pte.json]
    bazel run //models:resnet_pte.inspect [-- --json]

It reads the flatbuffer through ExecuTorch's own schema (see pte_schema.py; program_summary.py
says why not through ExecuTorch's reader), and the extended header that ExecuTorch writes after
the flatbuffer's first 8 bytes: the segment table. A .pte does not say which ExecuTorch release
lowered it: its manifest does (core/releases.py), the <name>.pte.json that executorch_program writes
beside it (and pte_inspect's target has among its files), or the one --manifest names.
"""

import argparse
import collections
import contextlib
import json
import os
import sys

from exporter.core import manifest, releases
from exporter.core.errors import BadFile
from exporter.formats import program_summary, ptd, pte_schema

FORMAT = "rules_torch_export/pte-summary/1"
MANIFEST_FORMAT = "rules_torch_export/pte-manifest/1"  # what actions/lower.py writes

_schema = None


def _load_schema():
    global _schema
    if _schema is None:
        _schema = pte_schema.Schema(pte_schema.executorch_schema_path())
    return _schema


def read_program(buf):
    """The Program table of a .pte held in buf (pte_schema's view; see program_summary.py)."""
    return pte_schema.read_root(_load_schema(), buf)


@contextlib.contextmanager
def refusing_corrupt(path):
    """Turns what the schema reader finds wrong with the bytes of `path` into one BadFile line."""
    try:
        yield
    except pte_schema.Corrupt as e:
        raise BadFile(f"{path}: corrupt: {e}") from None


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def _extended_header(buf):
    """(flatbuffer bytes, segment base offset) from the 'eh00' header, or (len, 0) without one."""
    if bytes(buf[8:12]) != b"eh00":
        return len(buf), 0
    if len(buf) < 32:
        raise pte_schema.Corrupt(f"its extended header is cut off at byte {len(buf)}")
    little = lambda a, b: int.from_bytes(buf[a:b], "little")  # noqa: E731
    flatbuffer_bytes, segment_base = little(16, 24), little(24, 32)
    if flatbuffer_bytes > len(buf) or segment_base > len(buf):
        raise pte_schema.Corrupt(f"its extended header puts the flatbuffer ({flatbuffer_bytes:,} bytes) or the "
                                 f"segments (from byte {segment_base:,}) past the end of its {len(buf):,} bytes")
    return flatbuffer_bytes, segment_base


def _segment(program, index, what):
    """Segment `index` of the program, which `what` names."""
    if not 0 <= index < len(program.segments):
        raise pte_schema.Corrupt(f"{what} names segment {index} of {len(program.segments)}")
    return program.segments[index]


def _segment_roles(program, methods_delegates):
    """What each segment holds: constants, a method's delegate, named data or mutable data."""
    roles = collections.defaultdict(list)
    constant = program.constant_segment
    if constant is not None and len(program.segments):
        _segment(program, constant.segment_index, "the constant segment")
        roles[constant.segment_index].append("constants")
    for method, delegate_id, processed in methods_delegates:
        if processed.location == "SEGMENT":
            _segment(program, processed.index, f"delegate {delegate_id} of method {method}")
            roles[processed.index].append(f"delegate {delegate_id} ({method})")
    for entry in program.named_data:
        _segment(program, entry.segment_index, f"named data {entry.key!r}")
        roles[entry.segment_index].append("named data")
    for mutable in program.mutable_data_segments:
        _segment(program, mutable.segment_index, "the mutable data")
        roles[mutable.segment_index].append("mutable data")
    return roles


def summarize_bytes(buf):
    """The summary of a .pte held in `buf`, as a JSON-ready dict."""
    program = read_program(buf)
    flatbuffer_bytes, segment_base = _extended_header(buf)
    plans = list(program.execution_plan)
    methods = program_summary.methods(program)
    delegate_refs = [(p.name, d.id, d.processed) for p in plans for d in p.delegates]
    roles = _segment_roles(program, delegate_refs)
    for i, s in enumerate(program.segments):
        if segment_base + s.offset + s.size > len(buf):
            raise pte_schema.Corrupt(f"segment {i} ({s.size:,} bytes at {segment_base + s.offset:,}) runs past the "
                                     f"end of its {len(buf):,} bytes")
    segments = [
        {"index": i, "offset": segment_base + s.offset, "bytes": s.size,
         "holds": sorted(set(roles.get(i, [])))}
        for i, s in enumerate(program.segments)
    ]
    constant = program.constant_segment
    if constant is not None and len(constant.offsets) > 1 and len(program.segments):
        constants = {"location": "segment", "tensors": len(constant.offsets) - 1,
                     "bytes": program.segments[constant.segment_index].size}
    else:  # Older programs keep constants inline; buffer 0 is a reserved empty entry.
        buffers = list(program.constant_buffer)
        constants = {"location": "inline", "tensors": max(len(buffers) - 1, 0),
                     "bytes": sum(len(b.storage) for b in buffers)}
    named = collections.Counter(e.segment_index for e in program.named_data)  # indexes checked by _segment_roles
    return {
        "format": FORMAT,
        "file_bytes": len(buf),
        "program_version": program.version,
        "flatbuffer_bytes": flatbuffer_bytes,
        "methods": methods,
        "constant_methods": program_summary.constants(program),
        "constants": constants,
        "named_data": {"entries": sum(named.values()),
                       "bytes": sum(program.segments[i].size for i in named)},
        "segments": segments,
    }


def summarize_ptd(path):
    """A .ptd (ExecuTorch's named data file): each named tensor's key, bytes and layout. A corrupt
    one raises BadFile (formats/ptd.py reads it); run it before handing a .ptd to ExecuTorch,
    which follows its offsets."""
    read = ptd.read(path)
    tensors = [{"key": key, "bytes": e.size, "dtype": e.dtype, "sizes": list(e.sizes) if e.sizes is not None else None}
               for key, e in read.entries.items()]
    return {"file_bytes": read.file_bytes, "bytes": read.data_bytes, "tensors": tensors}


def format_ptd(summary, name):
    """A .ptd summary as the text that `pte_inspect` prints."""
    lines = [f"{name}: {fmt_bytes(summary['file_bytes'])}, {len(summary['tensors'])} named tensors, "
             f"{fmt_bytes(summary['bytes'])}"]
    for t in summary["tensors"]:
        layout = f"{t['dtype']}[{', '.join(map(str, t['sizes']))}]" if t["dtype"] else "(no layout)"
        lines.append(f"  {t['key']}  {layout}  {fmt_bytes(t['bytes'])}")
    return "\n".join(lines) + "\n"


def summarize(path):
    """summarize_bytes of the file at `path`; a corrupt file raises BadFile naming it."""
    buf = read_file(path)
    with refusing_corrupt(path):
        return summarize_bytes(buf)


def operator_names(path):
    """The names in the operator tables of the program's methods ("aten::add.out"); a corrupt
    program raises BadFile naming it."""
    buf = read_file(path)
    with refusing_corrupt(path):
        return {name for plan in read_program(buf).execution_plan for name in program_summary.op_names(plan)}


def release_of(path, manifest_path=None):
    """The release record (releases.of_manifest) of the .pte at `path` from its manifest:
    `manifest_path`, else the <path>.json beside it; None without one. Raises BadFile in one line
    for a manifest that is not one, or that records another .pte's sha256."""
    beside = manifest_path is None
    manifest_path = path + ".json" if beside else manifest_path
    if beside and not os.path.isfile(manifest_path):
        return None
    try:
        with open(manifest_path, encoding="utf-8") as f:
            found = json.load(f)
    except (OSError, ValueError) as e:
        raise BadFile(f"{manifest_path}: not a program manifest ({getattr(e, 'strerror', None) or e})") from None
    if not isinstance(found, dict) or found.get("format") != MANIFEST_FORMAT:
        raise BadFile(f"{manifest_path}: not a program manifest ({MANIFEST_FORMAT})")
    recorded, digest = found.get("pte", {}).get("sha256"), manifest.sha256_file(path)
    if recorded != digest:
        raise BadFile(f"{manifest_path} is not the manifest of {path}: it records a .pte of sha256 {recorded}, "
                      f"and that file's is {digest}; give the .pte.json its executorch_program wrote with it")
    return releases.of_manifest(found)


def format_release(found):
    """The text's line of a program's release, or what to give when it has no manifest."""
    if found is None:
        return "ExecuTorch release: not recorded in a .pte; give its manifest (--manifest <name>.pte.json)"
    return f"ExecuTorch release: {releases.describe(found)}"


def fmt_bytes(n):
    """'46,741,664 bytes (44.6 MiB)'."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n:,} bytes ({n / scale:.1f} {unit})"
    return f"{n:,} bytes"


def format_value(v):
    if v["type"] != "tensor":
        return v["type"]
    dynamic = "" if v["dynamism"] == "static" else f"  ({v['dynamism'].replace('_', ' ')}: sizes are upper bounds)"
    return f"tensor {v['dtype']}[{', '.join(map(str, v['sizes']))}]{dynamic}"


def delegates_by_backend(summary):
    """{backend id: {"blobs", "bytes", "methods"}} over every method of a .pte's summary: what a
    delegate's id names is the backend that runs it (its record's delegate_id, e.g. XnnpackBackend)."""
    found = {}
    for method, m in summary["methods"].items():
        for backend, d in m["delegates"].items():
            entry = found.setdefault(backend, {"blobs": 0, "bytes": 0, "methods": []})
            entry["blobs"] += d["count"]
            entry["bytes"] += d["bytes"]
            entry["methods"].append(method)
    return dict(sorted(found.items()))


def format_delegates(found):
    """The lines that name each backend's delegate blobs and their bytes (delegates_by_backend)."""
    lines = [f"delegates by backend: {', '.join(found) or 'none (every operator runs on kernels)'}"]
    lines += [f"  {backend}: {d['blobs']} blob{'s' if d['blobs'] != 1 else ''}, {fmt_bytes(d['bytes'])}, "
              f"in {', '.join(d['methods'])}" for backend, d in found.items()]
    return lines


def format_text(summary, name):
    """The summary as the human-readable text that `pte_inspect` prints."""
    lines = [f"{name}: {fmt_bytes(summary['file_bytes'])}, program version {summary['program_version']}",
             f"flatbuffer {fmt_bytes(summary['flatbuffer_bytes'])}"]
    for method, m in summary["methods"].items():
        lines += ["", f"method {method}: {m['instructions']} instructions"]
        for kind in ("inputs", "outputs"):
            lines.append(f"  {kind}")
            lines += [f"    {i}: {format_value(v)}" for i, v in enumerate(m[kind])] or ["    (none)"]
        calls = sum(m["operators"].values())
        lines.append(f"  operators: {len(m['operators'])} kinds, {calls} calls outside delegates")
        lines += [f"    {count:5d}  {op}" for op, count in m["operators"].items()]
        lines.append(f"  delegates: {sum(d['count'] for d in m['delegates'].values())}")
        lines += [f"    {d['count']:5d}  {i}  {fmt_bytes(d['bytes'])}" for i, d in m["delegates"].items()]
        planned = m["planned_memory"]
        lines.append(f"  planned memory: {fmt_bytes(planned['bytes'])} in {len(planned['buffers'])} buffer(s)")
    for method, value in summary["constant_methods"].items():  # metadata and the input schema
        lines += ["", f"constant method {method}: {value!r}"]
    lines += [""] + format_delegates(delegates_by_backend(summary))
    c = summary["constants"]
    lines += ["", f"constants ({c['location']}): {c['tensors']} tensors, {fmt_bytes(c['bytes'])}",
              f"named data: {summary['named_data']['entries']} entries, {fmt_bytes(summary['named_data']['bytes'])}",
              f"segments: {len(summary['segments'])}, "
              f"{fmt_bytes(sum(s['bytes'] for s in summary['segments']))}"]
    # Named-data segments (a delegate's weights, one per tensor) are many; they are totalled above.
    lines += [f"  {s['index']:3d}  {fmt_bytes(s['bytes'])}  {', '.join(s['holds']) or '(unreferenced)'}"
              for s in summary["segments"] if s["holds"] != ["named data"]]
    return "\n".join(lines) + "\n"


def _resolve(path):
    """Paths given to `bazel run` are relative to where the user ran bazel."""
    if os.path.isabs(path) or os.path.exists(path):
        return path
    return os.path.join(os.environ.get("BUILD_WORKING_DIRECTORY", ""), path)


def _inspect(path, args):
    """Prints one .pte's or .ptd's summary; a .pte's with its release, from its manifest."""
    if path.endswith(".ptd"):
        summary = summarize_ptd(path)
        sys.stdout.write(json.dumps(summary, indent=2, sort_keys=True) + "\n" if args.json else format_ptd(
            summary, os.path.basename(path)))
        return
    summary = summarize(path)
    if args.json:  # what the build's .summary.json holds; the release is the manifest's to say
        print(json.dumps(summary, indent=2, sort_keys=True))
        return
    found = release_of(path, _resolve(args.manifest) if args.manifest else None)
    first, rest = format_text(summary, os.path.basename(path)).split("\n", 1)
    sys.stdout.write(f"{first}\n{format_release(found)}\n{rest}")


def main(argv):
    parser = argparse.ArgumentParser(prog="pte_inspect", description=__doc__.splitlines()[0])
    parser.add_argument("pte", nargs="+", help="a .pte or .ptd file (other files are ignored, "
                        "so a target's $(rootpaths) can be passed as is)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--manifest", help="the .pte's manifest, which names the ExecuTorch release that "
                        "lowered it (default: the <file>.json beside the .pte, where executorch_program writes it)")
    args = parser.parse_args(argv)
    paths = [_resolve(p) for p in args.pte if p.endswith((".pte", ".ptd"))]
    if not paths:
        print(f"pte_inspect: no .pte or .ptd file among {args.pte}", file=sys.stderr)
        return 2
    if args.manifest and sum(p.endswith(".pte") for p in paths) != 1:
        print("pte_inspect: --manifest names the manifest of one .pte; give one .pte with it", file=sys.stderr)
        return 2
    for path in paths:
        try:
            _inspect(path, args)
        except (BadFile, OSError) as e:  # BadFile names the file; the OSError's own message does too
            print(f"pte_inspect: cannot read {e if isinstance(e, BadFile) else f'{path}: {e.strerror}'}",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
