"""Seeded mutants of a file: the same seed gives the same bytes on every machine.

Four kinds of damage, taken in turn, so that every set has each kind:
- "bytes": 1 to 8 random bytes changed anywhere (what a flipped bit or a bad disk does);
- "structure": 1 to 8 random bytes changed inside the file's structure (its header and index:
  a FlatBuffer's tables, a zip's directory), where a reader follows sizes and offsets;
- "word": one aligned 32-bit word inside the structure set to an extreme value (0, 1, the
  file's length, 2^31 - 1, 2^31, 2^32 - 1), what a crafted file does to a size or an offset;
- "truncated": the file cut short at a random length (an interrupted write or download).

A zip archive (.pt2) checks each entry with a CRC, so changed bytes are caught before anything
parses them. Its "structure" and "word" mutants are therefore crafted ones, as a writer of a
shared cache could make them: an entry's content is changed (a JSON entry's value replaced by an
extreme one, or bytes of another entry changed) and the archive written again with valid CRCs.

A .pt2 can also have Python planted where torch evaluates its text (`planted`): a size
expression (sympy.sympify) or a guard (exec, in ExportedProgram.module()), replaced by code that
creates a marker file, alone or inside what torch wrote; or a graph input's name, which torch
writes into the forward's definition (`def forward(self, x=<code>)` runs it in torch.export.load).
"""

import io
import json
import random
import struct
import zipfile

KINDS = ("bytes", "structure", "word", "truncated")


def structure_end(data):
    """Where the bytes that readers interpret end and plain payload begins: a .pte's or .ptd's
    FlatBuffer (its extended header says how long it is), else the whole file."""
    if data[8:12] in (b"eh00", b"FH01") and len(data) >= 24:
        if data[8:12] == b"eh00":  # .pte: u32 header length, u64 flatbuffer size
            size = struct.unpack_from("<Q", data, 16)[0]
        else:  # .ptd: u32 header length, u64 flatbuffer offset, u64 flatbuffer size
            offset, size = struct.unpack_from("<QQ", data, 16)
            size += offset
        return max(64, min(size, len(data)))
    return len(data)


_EXTREMES = (-1, 0, 2**31, -(2**63), 2**64, 1e308, "", "x" * 300, None, [], {}, True)


def _json_leaves(value, path=()):
    if isinstance(value, dict):
        for key in sorted(value):
            yield from _json_leaves(value[key], path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _json_leaves(item, path + (i,))
    else:
        yield path


def _holder(value, path):
    """The container at path inside a JSON value."""
    for key in path:
        value = value[key]
    return value


def _crafted_zip(data, rng, kind):
    """The archive with one entry's content changed, written again with valid CRCs."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        contents = [archive.read(info) for info in infos]
    jsons = [i for i, info in enumerate(infos) if info.filename.endswith(".json")]
    target = rng.choice(jsons) if jsons and kind == "word" else rng.randrange(len(infos))
    content = contents[target]
    if target in jsons:
        value = json.loads(content)
        leaves = list(_json_leaves(value))
        if leaves and leaves[0]:
            *parents, last = rng.choice(leaves)
            _holder(value, parents)[last] = rng.choice(_EXTREMES)
        content = json.dumps(value).encode()
    elif content:
        changed = bytearray(content)
        for _ in range(rng.randint(1, 8)):
            changed[rng.randrange(len(changed))] = rng.randrange(256)
        content = bytes(changed)
    contents[target] = content
    return _zipped(infos, contents)


def _zipped(infos, contents):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for info, body in zip(infos, contents):
            archive.writestr(zipfile.ZipInfo(info.filename, date_time=info.date_time), body)
    return out.getvalue()


def code_that_creates(marker):
    return f"__import__('pathlib').Path({marker!r}).touch()"


# How planted code sits in a size expression or a guard: alone, inside what torch wrote, as a
# string that sympy's Max sympifies again.
_PLANTED = {
    "expr_str": ("{code}", "Add({written}, {code})", "Max({written}, {code!r})", "{written} if {code} else {written}"),
    "guards_code": ("{code} is None", "{written} or {code} is None"),
}


def _renamed(value, old, new):
    """The JSON value with every string `old`, as a value or a key, made `new`."""
    if isinstance(value, dict):
        return {new if k == old else k: _renamed(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, old, new) for v in value]
    return new if value == old else value


def _planted_name(program, code):
    """The program with its last graph input's name made `<name>=<code>`, wherever it is used
    (torch.fx's `def forward(self, ..., <name>=<code>)`: a default, which only the last may have)."""
    graph = program["graph_module"]["graph"]
    name = graph["inputs"][-1]["as_tensor"]["name"]
    program["graph_module"]["graph"] = _renamed(graph, name, f"{name}={code}")
    program["graph_module"]["signature"] = _renamed(program["graph_module"]["signature"], name, f"{name}={code}")
    return program


def planted(data, marker, seed, only=None):
    """(what was planted, the .pt2) with one of its size expressions, guards or graph input names
    made Python that creates the file `marker` (a program without guards gets one): the seed
    picks which and how; only ("expr_str", "guards_code" or "name") picks the kind."""
    rng = random.Random(seed)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        contents = [archive.read(info) for info in infos]
    target = next(i for i, info in enumerate(infos) if info.filename.endswith("/models/model.json"))
    program = json.loads(contents[target])
    kind, code = only or rng.choice(sorted(_PLANTED) + ["name"]), code_that_creates(marker)
    if kind == "name":
        contents[target] = json.dumps(_planted_name(program, code)).encode()
        return "planted name", _zipped(infos, contents)
    places = [path for path in _json_leaves(program) if kind in path[-2:]]
    if places:
        *parents, last = rng.choice(places)
        holder = _holder(program, parents)
        holder[last] = rng.choice(_PLANTED[kind]).format(written=holder[last], code=code)
    else:
        program[kind] = [_PLANTED[kind][0].format(code=code)]
    contents[target] = json.dumps(program).encode()
    return f"planted {kind}", _zipped(infos, contents)


def mutant(data, seed):
    """(kind of damage, mutated bytes) for seed; the kind cycles with the seed."""
    rng = random.Random(seed)
    kind = KINDS[seed % len(KINDS)]
    if data[:4] == b"PK\x03\x04" and kind in ("structure", "word"):
        return kind, _crafted_zip(data, rng, kind)
    out = bytearray(data)
    end = structure_end(data)
    if kind == "bytes":
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] = rng.randrange(256)
    elif kind == "structure":
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(end)] = rng.randrange(256)
    elif kind == "word":
        at = rng.randrange(end // 4) * 4
        value = rng.choice((0, 1, len(data), 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF))
        out[at:at + 4] = struct.pack("<I", value)
    else:
        del out[rng.randrange(len(out)):]
    return kind, bytes(out)
