"""The CalibrationData action: a calibration_data's batches, checked against its shape spec and
written as one canonical file that torch_quantize reads.

A batch is a dict {forward's parameter name: value}, one value per input of the shape spec.
The batches come from files (.pt: a list of batches, or one batch, read with
torch.load(weights_only=True); .npz: one batch, an array per input) or from an entry
('package.module:callable') that returns or yields them. The entry runs twice, seeded the same
way each time, and must give the same batches both times: the build is reproducible only if
they are.
"""

import io
import os

import torch

from exporter.core import atomic, manifest, phases, shape_spec
from exporter.core.errors import UserError
from exporter.core.export_errors import user_frame
from exporter.core.determinism import seed_everything
from exporter.core.model_loader import resolve_entry


def _load_file(path, config):
    name = os.path.basename(path)
    try:
        if path.endswith(".npz"):
            import numpy

            with numpy.load(path, allow_pickle=False) as arrays:
                return [{key: torch.from_numpy(arrays[key].copy()) for key in arrays.files}]
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise UserError(
            f"calibration_data {config.label}: {name} cannot be read: {str(e).splitlines()[0]}; "
            f"save a list of {{input name: tensor}} dicts with torch.save (or one batch per .npz)"
        ) from None
    return loaded if isinstance(loaded, (list, tuple)) else [loaded]


def _call_entry(entry, config):
    seed_everything()
    try:
        return list(entry(**config.init_args))
    except Exception as e:  # the user's code may raise anything
        raise UserError(
            f"calibration_data {config.label}: calling {config.entry!r} with init_args "
            f"{config.init_args} raised {type(e).__name__}: {e}{user_frame(e)}; fix the entry "
            f"(or init_args) so that it returns the batches"
        ) from None


def _same(a, b):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and torch.equal(a, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _check_repeatable(first, second, config):
    if len(first) != len(second):
        where = f"{len(first)} batches, then {len(second)}"
    else:
        index = next((i for i, (a, b) in enumerate(zip(first, second)) if not _same(a, b)), None)
        if index is None:
            return
        where = f"batch {index} differs"
    raise UserError(
        f"calibration_data {config.label}: entry {config.entry!r} gave different batches on two "
        f"calls ({where}); draw from a seeded torch.Generator (or read fixed files) so that the "
        f"quantized program is reproducible"
    )


def check_batches(batches, spec, who, spec_label):
    """Checks every batch against the spec; returns them as dicts in the spec's input order.

    who: what to blame in messages, e.g. "calibration_data //pkg:calib".
    """
    if not batches:
        raise UserError(f"{who} has no batches; give it at least one (16 to 64 is typical)")
    names = [e["name"] for e in spec["inputs"]]
    checked = []
    for index, batch in enumerate(batches):
        if not isinstance(batch, dict):
            raise UserError(
                f"{who}: batch {index} is a {type(batch).__name__}, not a dict of input name to "
                f"value; give each batch as {{{', '.join(repr(n) + ': ...' for n in names)}}}"
            )
        unknown = sorted(set(batch) - set(names), key=str)
        missing = [n for n in names if n not in batch]
        if unknown or missing:
            raise UserError(
                f"{who}: batch {index} has inputs {sorted(batch, key=str)}, but shape_spec "
                f"{spec_label} declares {names}; name each batch's inputs as the spec does"
            )
        dims = {}
        for entry in spec["inputs"]:
            _check_value(entry["value"], batch[entry["name"]], spec, dims,
                         f"{who}: batch {index}, input {shape_spec.key_text(entry['name'])}", spec_label)
        checked.append({n: batch[n] for n in names})
    return checked


def _check_value(node, value, spec, dims, where, spec_label):
    kind, body = next(iter(node.items()))
    if kind == "tensor":
        _check_tensor(body, value, spec, dims, where, spec_label)
    elif kind in ("list", "tuple"):
        if not isinstance(value, (list, tuple)) or len(value) != len(body):
            raise UserError(f"{where}: expected a {kind} of {len(body)} items as shape_spec {spec_label} declares")
        for i, (n, v) in enumerate(zip(body, value)):
            _check_value(n, v, spec, dims, f"{where}[{i}]", spec_label)
    elif kind == "dict":
        keys = [e["key"] for e in body]
        if not isinstance(value, dict) or sorted(map(str, value)) != sorted(map(str, keys)):
            raise UserError(f"{where}: expected a dict with keys {keys} as shape_spec {spec_label} declares")
        for e in body:
            _check_value(e["value"], value[e["key"]], spec, dims, f"{where}[{shape_spec.key_text(e['key'])}]", spec_label)
    elif value != (None if kind == "none" else body):
        raise UserError(
            f"{where} is {value!r}, but the program was exported with {body!r} there "
            f"(shape_spec {spec_label}); give that value in every batch"
        )


def _check_tensor(tensor, value, spec, dims, where, spec_label):
    if not isinstance(value, torch.Tensor):
        raise UserError(f"{where} is a {type(value).__name__}, not a tensor; give a {tensor['dtype']} tensor")
    dtype = str(value.dtype).replace("torch.", "")
    if dtype != tensor["dtype"]:
        raise UserError(
            f"{where} is {dtype}, but shape_spec {spec_label} declares {tensor['dtype']}; convert "
            f"the batch with .to(torch.{tensor['dtype']})"
        )
    if value.dim() != len(tensor["shape"]):
        raise UserError(
            f"{where} has shape {list(value.shape)}, but shape_spec {spec_label} declares "
            f"{len(tensor['shape'])} axes {tensor['shape']}; reshape the batch"
        )
    for axis, (size, written) in enumerate(zip(value.shape, tensor["shape"])):
        parsed = shape_spec.parse_size(written, spec.get("dims", {}))
        at = f"{where} axis {axis} has size {size}"
        if isinstance(parsed, int):
            if size != parsed:
                raise UserError(f"{at}, but shape_spec {spec_label} fixes it at {parsed}; make it {parsed}")
            continue
        base, rest = divmod(size - parsed.b, parsed.a)
        d = spec["dims"][parsed.name]
        lo, hi = d.get("min"), d.get("max")
        if rest or (lo is not None and base < lo) or (hi is not None and base > hi):
            raise UserError(
                f"{at}, which puts dim {parsed.name!r} ({written}) outside its range "
                f"[{lo or 0}, {'inf' if hi is None else hi}] in shape_spec {spec_label}; give a "
                f"size inside it"
            )
        if dims.setdefault(parsed.name, base) != base:
            raise UserError(
                f"{at}, so dim {parsed.name!r} is {base} there but {dims[parsed.name]} elsewhere "
                f"in the batch; make the sizes agree"
            )


def _canonical(value):
    if isinstance(value, torch.Tensor):
        return value.detach().clone().contiguous()
    if isinstance(value, (list, tuple)):
        return type(value)(_canonical(v) for v in value)
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    return value


def serialize(batches):
    """The canonical bytes of checked batches: torch.save into memory, so no file name leaks in."""
    buffer = io.BytesIO()
    torch.save([_canonical(b) for b in batches], buffer)
    return buffer.getvalue()


def load(path):
    """The batches a CalibrationData action wrote."""
    return torch.load(path, map_location="cpu", weights_only=True)


def _shapes(batch):
    return {k: list(v.shape) for k, v in batch.items() if isinstance(v, torch.Tensor)}


def run(config):
    """Runs the action for a CalibrationConfig."""
    if config.entry:
        with phases.running(phases.MODEL, code=f"calibration_data {config.label}"):
            entry = resolve_entry(config, config.import_roots)
            first, again = _call_entry(entry, config), _call_entry(entry, config)
        _check_repeatable(first, again, config)
        batches = first
    else:
        batches = [b for path in config.files for b in _load_file(path, config)]
    batches = check_batches(batches, config.spec, f"calibration_data {config.label}", config.spec_label)
    path = config.outputs["batches"]
    atomic.write_bytes(path, serialize(batches))
    manifest.write_json(config.outputs["manifest"], {
        "format": "rules_torch_export/calibration-manifest/1",
        "label": config.label,
        "shape_spec": config.spec_label,
        "batches": dict(manifest.file_record(path), count=len(batches)),
        "shapes": [_shapes(b) for b in batches],
        "inputs": manifest.inputs_record(config.raw),
        "toolchain": manifest.toolchain_record(config.identity),
    })
