"""Lowering a program against a foundation's weights (executorch_program's `foundation`).

Every tensor of the program goes to the foundation's .ptd, referenced by its key, except the
program's own: its LoRA factors (core/lora.py names them). ExecuTorch decides the keys: the
portable runtime's weights are keyed by their names, XNNPACK's by the sha256 of the bytes it
stores. So the lowering

1. tags the own tensors' placeholders, so that XNNPACK files their data apart
   (meta["custom"]["delegate_constant_tag"], ExecuTorch's switch);
2. after partitioning, sends every other named data entry (XNNPACK's weights, float or
   quantized) to the shared data file and keeps the own ones in the .pte, unless the foundation
   already holds them (an own blob with the bytes of a foundation's, such as a zero factor);
3. sends the weights outside delegates to the shared file too (ExecutorchBackendConfig's
   external_constants), except the own ones;
4. serialises the shared file it would write, and requires every entry in it to be in the
   foundation's .ptd with the same bytes and layout (verify). The file itself is dropped: the
   app loads the foundation's.

A program that step 4 refuses would read other weights than its model's, or fail to load.
"""

import dataclasses
import hashlib
import json
import os
import re
import tempfile

import torch

from exporter.core import lora
from exporter.core.errors import UserError
from exporter.formats import ptd

SHARED_TAG, OWN_TAG = "shared", "own"
INDEX_FORMAT = "rules_torch_export/foundation-index/1"
_POSITIONAL = re.compile(r"^_(lifted_)?tensor_constant_?\d+$")


@dataclasses.dataclass(frozen=True)
class Foundation:
    """A foundation's index (actions/foundation.py): its label, the .ptd's record and entries."""

    label: str
    ptd: dict
    entries: dict


def load(path, program_label):
    """The Foundation of an index file; UserError naming the program if it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("format") != INDEX_FORMAT:
            raise ValueError(f"format {data.get('format')!r}")
        entries = {str(k): ptd.Entry.from_json(v) for k, v in data["entries"].items()}
        return Foundation(str(data["label"]), {"sha256": str(data["ptd"]["sha256"]), "size": int(data["ptd"]["size"])},
                          entries)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise UserError(f"executorch_program {program_label}: its foundation's index {os.path.basename(path)} is "
                        f"not one foundation_weights writes ({type(e).__name__}: {e}); rebuild the foundation") from None


def _tensors(ep):
    """(placeholder name, FQN, tensor) of an ExportedProgram's parameters, buffers and constants."""
    sig = ep.graph_signature
    named = {**sig.inputs_to_parameters, **sig.inputs_to_buffers, **sig.inputs_to_lifted_tensor_constants}
    values = dict(ep.state_dict, **ep.constants)
    return [(node, fqn, values.get(fqn)) for node, fqn in named.items()]


def tag_own(programs):
    """Marks the own tensors' placeholders, so that XNNPACK files their data under OWN_TAG."""
    for ep in programs.values():
        own = {node for node, fqn, _ in _tensors(ep) if lora.is_factor(fqn)}
        for node in ep.graph.nodes:
            if node.op == "placeholder" and node.name in own:
                node.meta.setdefault("custom", {})["delegate_constant_tag"] = OWN_TAG


def split_named_data(edge, foundation):
    """Step 2: the delegates' named data to SHARED_TAG, the own entries to the .pte.

    ExecuTorch 1.5.1 keeps it in EdgeProgramManager._named_data_store, a private field (as
    lower.py's weights = "external" does)."""
    store = edge._named_data_store
    own = store.external_data.pop(OWN_TAG, {})
    shared = store.external_data.setdefault(SHARED_TAG, {})
    shared.update(store.pte_data)
    store.pte_data.clear()
    for key, entry in own.items():
        (shared if key in foundation.entries else store.pte_data)[key] = entry


def constant_tags(edge):
    """Step 3: ExecutorchBackendConfig's external_constants, a tag for each constant placeholder."""
    fqns = {}
    for method in edge.methods:
        fqns.update({node: fqn for node, fqn, _ in _tensors(edge.exported_program(method))})
    return lambda node: None if lora.is_factor(fqns.get(node.name, node.name)) else SHARED_TAG


def _names_by_digest(programs):
    """{sha256 of a tensor's float32 bytes: (FQN, tensor)}: XNNPACK keys a float weight so."""
    names = {}
    for ep in programs.values():
        for _, fqn, value in _tensors(ep):
            plain = isinstance(value, torch.Tensor) and type(value.data) is torch.Tensor  # not torchao's subclasses
            if plain and value.is_floating_point() and not lora.is_factor(fqn):
                data = value.detach().to(torch.float32).contiguous().numpy().tobytes()
                names.setdefault(hashlib.sha256(data).hexdigest(), (fqn, value))
    return names


def _describe(key, entry, names):
    """"its weight 'lm.head.weight' (float32[96, 128])", as the user's model names it."""
    if entry.dtype is not None:
        return f"its weight {key!r} ({entry.layout_text()})"
    if key in names:
        fqn, value = names[key]
        return f"its weight {fqn!r} ({str(value.dtype).replace('torch.', '')}{list(value.shape)})"
    return f"a weight of {entry.size} bytes that its lowering derives from the model's (key {key[:12]}...)"


def is_pt2e(programs):
    """Whether a program was quantized by PT2E (torch_quantize): its graph (de)quantizes."""
    return any(str(getattr(node.target, "namespace", "")) == "quantized_decomposed"
               for ep in programs.values() for node in ep.graph.nodes if node.op == "call_function")


def _refusal(label, foundation, key, entry, names, pt2e):
    """The one-line message for an entry the foundation does not hold as the program has it."""
    what = _describe(key, entry, names)
    theirs = foundation.entries.get(key)
    head = f"executorch_program {label}: {what}"
    if pt2e and (theirs is None or _POSITIONAL.match(key)):
        return (f"{head} is not in foundation {foundation.label}'s .ptd as the program has it: the program is quantized "
                f"by PT2E (torch_quantize), which quantizes the LoRA factors too (XNNPACK then files them with the "
                f"shared weights) and names its constants by position; ExecuTorch 1.5.1 cannot share such weights, so "
                f"quantize before export (llm_program's quantize = \"8da4w\") or drop foundation")
    if theirs is None:
        return (f"{head} is not in foundation {foundation.label}'s .ptd: the model's base weights differ from the "
                f"foundation's; build it from the foundation's model and checkpoint, with the same backends and quantize")
    if theirs.layout_text() != entry.layout_text() or theirs.dim_order != entry.dim_order:
        return f"{head} is {theirs.layout_text()} in foundation {foundation.label}; use the foundation's model"
    return (f"{head} holds other values than foundation {foundation.label}'s: the model's base weights differ from the "
            f"foundation's; build it from the foundation's model and checkpoint")


def _own_record(programs):
    seen = {}
    for ep in programs.values():
        for _, fqn, value in _tensors(ep):
            if lora.is_factor(fqn) and isinstance(value, torch.Tensor):
                seen[fqn] = value.numel() * value.element_size()
    return {"tensors": len(seen), "bytes": sum(seen.values())}


def verify(et_program, programs, foundation, label):
    """Step 4: every entry of the would-be shared file is the foundation's; returns the
    manifest's "foundation" record. UserError naming the first entry that is not."""
    with tempfile.TemporaryDirectory(prefix="shared-") as folder:
        et_program.write_tensor_data_to_file(folder)
        written = sorted(os.listdir(folder))
        if written not in ([], [SHARED_TAG + ".ptd"]):
            raise UserError(f"executorch_program {label}: the lowering wrote data files {written}; expected only the "
                            f"shared one")
        entries = ptd.read(os.path.join(folder, written[0])).entries if written else {}
    names = None
    for key, entry in sorted(entries.items()):
        if foundation.entries.get(key) != entry:
            names = names if names is not None else _names_by_digest(programs)
            raise UserError(_refusal(label, foundation, key, entry, names, is_pt2e(programs)))
    return {
        "label": foundation.label,
        "ptd": foundation.ptd,
        "shared": {"entries": len(entries), "bytes": sum({e.sha256: e.size for e in entries.values()}.values())},
        "own": _own_record(programs),
    }
