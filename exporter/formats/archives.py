"""What torch would unpickle in a .pt2 or an ETRecord, checked before either is loaded.

A pickle can call any function, so loading one from a shared cache runs whatever the cache's
writer put there. What torch 2.13 and ExecuTorch 1.5.1 unpickle (read in their sources):

.pt2 (torch.export.load -> torch/export/pt2_archive/_package.py load_pt2):
- data/sample_inputs/<model>.pt, always a pickle (torch.save): read by
  serde.serialize.deserialize_torch_artifact with torch.load(weights_only=True), and when that
  refuses, AGAIN WITH weights_only=False: full unpickling;
- data/weights/* and data/constants/tensor_* whose entry in <model>_weights_config.json or
  <model>_constants_config.json says "use_pickle" (tensor subclasses, e.g. torchao's 4-bit
  weights): torch.load(weights_only=False);
- data/constants/custom_obj_*: TorchScript's unpickler (torch._C._pickle_load_obj), which
  instantiates registered classes; data/constants/opaque_obj_*: Python's pickle.loads;
- data/weights/<model>.pt and data/constants/<model>.pt (files of older torch versions), and the
  files of the archive format before torch 2.7 (serialized_*.pt): deserialize_torch_artifact;
- data/aotinductor/: compiled shared libraries, which load_pt2 loads (dlopen runs their code).

ETRecord (executorch.devtools.etrecord.parse_etrecord): the *_state_dict, *_constants and
*_example_inputs entries (exir.serde deserialize_torch_artifact) and reference_outputs and
representative_inputs, all with torch.load(weights_only=True) in 1.5.1, no fallback.

So a .pt2 may hold only the entries torch.export.save writes (the names below) and no
TorchScript or Python pickle; every entry torch unpickles must pass torch's weights-only
unpickler (tensors, containers and the classes torch and torchao allow: no call of anything
else) before the archive is loaded, and during the load every torch.load is forced to
weights-only (torch's TORCH_FORCE_WEIGHTS_ONLY_LOAD), so that no fallback can unpickle fully.
The programs' JSON (a .pt2's models/<name>.json, an ETRecord's programs) holds expressions that
sympy and torch evaluate as Python: expressions.py checks them first.
"""

import contextlib
import io
import json
import os
import re
import zipfile

from exporter.core.errors import BadFile
from exporter.formats import expressions, names

# The entries torch.export.save writes (after the archive's own folder), and nothing else.
_PT2_ENTRIES = re.compile(
    r"(archive_format|archive_version|byteorder|\.data/version|\.data/serialization_id"
    r"|models/[^/]+\.json|data/sample_inputs/[^/]+\.pt|data/weights/[^/]+_weights_config\.json"
    r"|data/weights/weight_\d+|data/constants/[^/]+_constants_config\.json|data/constants/tensor_\d+"
    r"|extra/[^/]+)")
# ETRecord entries that ExecuTorch reads with torch.load; every other entry but the empty marker
# is JSON.
_ETRECORD_PICKLES = ("_state_dict", "_constants", "_example_inputs", "reference_outputs", "representative_inputs")
_ETRECORD_MARKER = "ETRECORD_V0"


@contextlib.contextmanager
def weights_only():
    """Every torch.load in the block is weights-only, whatever its caller asked for."""
    before = os.environ.get("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
    os.environ["TORCH_FORCE_WEIGHTS_ONLY_LOAD"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["TORCH_FORCE_WEIGHTS_ONLY_LOAD"]
        else:
            os.environ["TORCH_FORCE_WEIGHTS_ONLY_LOAD"] = before


def open_zip(raw, path, kind):
    """The zip archive in bytes `raw`, its entries' CRCs checked; BadFile when it is none."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        broken = archive.testzip()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, ValueError, EOFError,
            OSError) as e:
        raise BadFile(f"{path}: not a zip archive (a {kind} is one), or a truncated one: {e}") from None
    if broken:
        raise BadFile(f"{path}: entry {broken} of the archive fails its CRC check: the file is corrupt")
    return archive


def _check_unpickles(archive, entries, path):
    """Every entry in entries passes torch's weights-only unpickler: no pickle that calls code.
    Returns {entry: what it holds}."""
    import torch

    loaded = {}
    for name in entries:
        try:
            loaded[name] = torch.load(io.BytesIO(archive.read(name)), weights_only=True)
        except Exception as e:  # the unpickler's refusal (UnpicklingError) or a broken entry
            raise BadFile(f"{path}: refused: entry {name} holds a pickle that torch's weights-only unpickler "
                          f"rejects ({_reason(e)}); it could run code, so it is not loaded") from None
    return loaded


def _reason(error):
    """The line of torch.load's many that says why: what follows "WeightsUnpickler error:"."""
    lines = [line.strip() for line in str(error).splitlines()]
    marks = [i for i, line in enumerate(lines) if "WeightsUnpickler error" in line]
    after = [line for line in lines[marks[0]:] if line][1:2] if marks else []
    return (after or [line for line in lines if line] or [type(error).__name__])[0][:160]


def _json(archive, name, path):
    try:
        return json.loads(archive.read(name))
    except (ValueError, UnicodeDecodeError) as e:
        raise BadFile(f"{path}: entry {name} is not JSON: {e}") from None


def check_pt2(archive, path):
    """Refuses a .pt2 whose entries torch would unpickle other than with its weights-only
    unpickler, or which the weights-only unpickler rejects (see the module's docstring)."""
    listed = archive.namelist()
    folders = {name.split("/", 1)[0] for name in listed}
    if len(folders) != 1 or any("/" not in name for name in listed):
        raise BadFile(f"{path}: not a .pt2 archive: its entries are not in one folder")
    folder = folders.pop() + "/"
    unexpected = [name for name in listed if not _PT2_ENTRIES.fullmatch(name[len(folder):])]
    if unexpected:
        raise BadFile(f"{path}: refused: entry {unexpected[0]} is not one torch.export.save writes "
                      f"(AOTInductor code, pickled objects and older formats are not loaded)")
    archive_format = folder + "archive_format"
    if archive_format not in listed or archive.read(archive_format) != b"pt2":
        raise BadFile(f"{path}: not a .pt2 archive: no archive_format entry saying pt2")
    pickled = [name for name in listed if name.startswith(folder + "data/sample_inputs/")]
    for config_name in listed:
        if not config_name.endswith("_config.json"):
            continue
        config = _json(archive, config_name, path)
        entries = config.get("config") if isinstance(config, dict) else None
        if not isinstance(entries, dict):
            raise BadFile(f"{path}: entry {config_name} is not a payload config")
        for fqn, meta in entries.items():
            file = meta.get("path_name") if isinstance(meta, dict) else None
            if not isinstance(file, str) or not re.fullmatch(r"(weight|tensor)_\d+", file):
                raise BadFile(f"{path}: refused: {fqn!r} in {config_name} is stored as {file!r}, which torch "
                              f"would unpickle with TorchScript's or Python's unpickler")
            entry = os.path.join(os.path.dirname(config_name), file)
            if entry not in listed:
                raise BadFile(f"{path}: {config_name} names {entry}, which the archive lacks")
            if meta.get("use_pickle"):
                pickled.append(entry)
            elif archive.getinfo(entry).file_size == 0 and _numel(meta) != 0:
                # torch makes an empty entry a zero tensor of the recorded sizes: any size it is told
                raise BadFile(f"{path}: {entry} is empty, but {config_name} gives {fqn!r} the sizes of a "
                              f"non-empty tensor")
    for name in listed:
        if name.startswith(folder + "models/") and name.endswith(".json"):
            program = archive.read(name)  # decompressed once for both checks: a large model's is megabytes
            expressions.check_program(program, name, path)
            names.check_program(program, name, path)
    for name, value in _check_unpickles(archive, pickled, path).items():
        if "/data/sample_inputs/" in name:
            names.check_sample_inputs(value, name, path)


def _numel(meta):
    """The element count a payload entry's tensor_meta records (None when it records none)."""
    sizes = (meta.get("tensor_meta") or {}).get("sizes") if isinstance(meta.get("tensor_meta"), dict) else None
    if not isinstance(sizes, list):
        return None
    numel = 1
    for size in sizes:
        value = size.get("as_int") if isinstance(size, dict) else None
        numel *= value if isinstance(value, int) else 1
    return numel


def check_etrecord(path):
    """Refuses an ETRecord whose pickled entries torch's weights-only unpickler rejects, or whose
    programs hold expressions that are not what torch and ExecuTorch write."""
    with open(path, "rb") as f:
        archive = open_zip(f.read(), path, "ETRecord")
    pickled = [n for n in archive.namelist() if n.endswith(_ETRECORD_PICKLES)]
    for name in archive.namelist():
        if name not in pickled and name != _ETRECORD_MARKER:
            expressions.check_program(archive.read(name), name, path)
    _check_unpickles(archive, pickled, path)
