"""Programs against a foundation's weights, in-process on a small model: a LoRA program keeps only
its factors and runs with the foundation's .ptd in ExecuTorch's runtime (XNNPACK, portable,
torchao's 8da4w); each refusal (other base weights, PT2E quantization, a bad index) is one line."""

import dataclasses
import functools
import hashlib
import json
import os
from types import SimpleNamespace

import pytest
import torch
from safetensors.torch import save_file
from torch import nn

from exporter.actions import foundation as foundation_action
from exporter.actions import lower, sharing
from exporter.core import lora, manifest
from exporter.core.errors import UserError

X = torch.randn(2, 64, generator=torch.Generator().manual_seed(3))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down, self.norm = nn.Linear(64, 64), nn.Linear(64, 64), nn.LayerNorm(64)

    def forward(self, x):
        return self.norm(self.down(torch.relu(self.up(x))))


def _base(shift=0.0):
    torch.manual_seed(0)
    net = Net().eval()
    with torch.no_grad():
        net.down.weight.add_(shift)
    return net


@dataclasses.dataclass(frozen=True)
class Adapter:
    checkpoint: str
    label: str = "//pkg:adapted"
    rank: int = 2
    alpha: float = 4.0
    target_modules: tuple = ("up", "down")
    checkpoint_dir: str | None = None


def _adapter(tmp_path, zero_b=False):
    g = torch.Generator().manual_seed(1)
    state = {}
    for layer in ("up", "down"):
        state[f"{layer}.lora_a.weight"] = torch.randn(2, 64, generator=g) * 0.1
        state[f"{layer}.lora_b.weight"] = torch.zeros(64, 2) if zero_b else torch.randn(64, 2, generator=g) * 0.1
    path = str(tmp_path / "adapter.safetensors")
    save_file(state, path)
    return Adapter(path)


def _quantized(model, scheme):
    if scheme == "8da4w":
        from exporter.actions import eager_quantize

        eager_quantize.apply(model, "8da4w", 32, "//pkg:ep")
    return model


def _export(model, scheme=None):
    with torch.no_grad():
        ep = torch.export.export(_quantized(model, scheme), (X,))
    if scheme != "pt2e":
        return ep
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True, is_dynamic=True))
    prepared = prepare_pt2e(ep.module(), quantizer)
    prepared(X)
    with torch.no_grad():
        return torch.export.export(convert_pt2e(prepared), (X,))


@functools.cache
def _base_program(backends, scheme):
    """The base's program (weights = "external") for backends (a tuple) and scheme: the same
    lowering for every test that builds this foundation, so it is lowered once."""
    program, _ = lower.lower(_export(_base(), scheme), list(backends), external_weights=True)
    return program


def _foundation(tmp_path, backends, scheme=None):
    """A foundation from the base's program (weights = "external"), as the actions make it."""
    program = _base_program(tuple(backends), scheme)
    ptd = str(tmp_path / "base.ptd")
    record = lower._write_weights(program, ptd)
    manifest.write_json(str(tmp_path / "base.pte.json"), {"backends": backends, "ptd": record, "toolchain": {}})
    config = SimpleNamespace(label="//pkg:foundation", program="//pkg:base", ptd=ptd, manifest=str(tmp_path / "base.pte.json"),
                             outputs={"index": str(tmp_path / "foundation.json")})
    foundation_action.run(config)
    return sharing.load(config.outputs["index"], "//pkg:adapted"), ptd


def _shared(ep, backends, found, label="//pkg:adapted"):
    programs = {"forward": ep}
    program, _ = lower.lower(programs, backends, foundation=found)
    return program, sharing.verify(program, programs, found, label)


def _pte_named_data(program):
    """{key: bytes} of the named data a serialised .pte holds."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    named = deserialize_pte_binary(program.buffer).named_data
    return {key: len(named.buffers[e.buffer_index]) for key, e in named.pte_data.items()} if named else {}


def _run(program, ptd, tmp_path):
    from executorch.runtime import Runtime

    path = tmp_path / "adapted.pte"
    path.write_bytes(program.buffer)
    return Runtime.get().load_program(str(path), data_path=ptd).load_method("forward").execute([X])[0]


@pytest.mark.parametrize("backends, scheme, atol", [(["xnnpack"], None, 1e-5), ([], None, 1e-5),
                                                    (["xnnpack"], "8da4w", 0.1)])
def test_a_lora_program_keeps_only_its_factors_and_runs_with_the_foundation(tmp_path, backends, scheme, atol):
    found, ptd = _foundation(tmp_path, backends, scheme)
    adapter = _adapter(tmp_path)
    program, record = _shared(_export(lora.apply(_base(), adapter), scheme), backends, found)
    assert record["own"] == {"tensors": 4, "bytes": 4 * 64 * 2 * 4}
    assert record["ptd"] == manifest.file_record(ptd) and record["shared"]["entries"] == len(found.entries)
    own = _pte_named_data(program)  # the .pte's named data: XNNPACK's copies of the factors, if any
    assert not set(own) & set(found.entries)
    assert sum(own.values()) <= record["own"]["bytes"]
    if scheme is None:  # float base weights would double the .pte
        assert len(program.buffer) < os.path.getsize(ptd) / 2
    with torch.no_grad():
        expected = _quantized(lora.apply(_base(), adapter), scheme)(X)
        base = _base()(X)
    got = _run(program, ptd, tmp_path)
    torch.testing.assert_close(got, expected, rtol=0, atol=atol)
    assert (got - base).abs().max() > 0.05  # the adapter's factors are applied


@pytest.mark.parametrize("backends, reason", [
    (["xnnpack"], "its weight 'down.weight' (float32[64, 64]) is not in foundation //pkg:foundation's .ptd: the "
                  "model's base weights differ from the foundation's; build it from the foundation's model and "
                  "checkpoint, with the same backends and quantize"),
    ([], "its weight 'down.weight' (float32[64, 64]) holds other values than foundation //pkg:foundation's: the "
         "model's base weights differ from the foundation's; build it from the foundation's model and checkpoint"),
])
def test_other_base_weights_are_refused(tmp_path, backends, reason):
    found, _ = _foundation(tmp_path, backends)
    with pytest.raises(UserError) as e:
        _shared(_export(lora.apply(_base(shift=0.01), _adapter(tmp_path))), backends, found)
    assert str(e.value) == "executorch_program //pkg:adapted: " + reason


def test_pt2e_quantized_lora_is_refused_with_the_reason(tmp_path):
    found, _ = _foundation(tmp_path, ["xnnpack"], "pt2e")
    with pytest.raises(UserError) as e:
        _shared(_export(lora.apply(_base(), _adapter(tmp_path)), "pt2e"), ["xnnpack"], found)
    message = str(e.value)
    assert "\n" not in message and message.startswith("executorch_program //pkg:adapted: ")
    assert ("the program is quantized by PT2E (torch_quantize), which quantizes the LoRA factors too (XNNPACK then "
            "files them with the shared weights) and names its constants by position; ExecuTorch 1.5.1 cannot share "
            "such weights, so quantize before export (llm_program's quantize = \"8da4w\") or drop foundation") in message


class WithSide(Net):
    """Net plus a layer whose zero weight [2, 64] has the bytes of a zero lora_b factor [64, 2]."""

    def __init__(self):
        super().__init__()
        self.side = nn.Linear(64, 2, bias=False)
        with torch.no_grad():
            self.side.weight.zero_()

    def forward(self, x):
        return super().forward(x) + self.side(x).sum(-1, keepdim=True)


def test_a_factor_equal_to_a_foundation_entry_is_shared_not_duplicated(tmp_path):
    """XNNPACK keys a blob by its bytes' sha256, so a zero lora_b factor has the key of the
    foundation's zero weight: the .pte leaves it to the .ptd instead of holding a second copy
    (1.5.1's runtime takes either; it checks duplicate keys only of entries with a layout).
    (Net's weights are WithSide's.)"""
    torch.manual_seed(0)
    program, _ = lower.lower(_export(WithSide().eval()), ["xnnpack"], external_weights=True)
    ptd = str(tmp_path / "base.ptd")
    manifest.write_json(str(tmp_path / "base.pte.json"),
                        {"backends": ["xnnpack"], "ptd": lower._write_weights(program, ptd), "toolchain": {}})
    config = SimpleNamespace(label="//pkg:foundation", program="//pkg:base", ptd=ptd, manifest=str(tmp_path / "base.pte.json"),
                             outputs={"index": str(tmp_path / "foundation.json")})
    foundation_action.run(config)
    found = sharing.load(config.outputs["index"], "//pkg:adapted")
    adapted = lora.apply(_base(), _adapter(tmp_path, zero_b=True))
    shared, _ = _shared(_export(adapted), ["xnnpack"], found)
    zero = hashlib.sha256(bytes(512)).hexdigest()
    assert zero in found.entries and zero not in _pte_named_data(shared) and _pte_named_data(shared)
    with torch.no_grad():
        torch.testing.assert_close(_run(shared, ptd, tmp_path), adapted(X), rtol=0, atol=1e-5)


def test_a_bad_index_or_ptd_is_refused_in_one_line(tmp_path):
    (tmp_path / "index.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(UserError, match=r"^executorch_program //pkg:a: its foundation's index index.json is not one "
                                        r"foundation_weights writes \(ValueError: format 'something else'\); rebuild"):
        sharing.load(str(tmp_path / "index.json"), "//pkg:a")
    (tmp_path / "base.ptd").write_bytes(b"not a ptd" * 10)
    (tmp_path / "base.pte.json").write_text(json.dumps({"ptd": {"sha256": "0"}, "backends": [], "toolchain": {}}))
    config = SimpleNamespace(label="//pkg:foundation", program="//pkg:base", ptd=str(tmp_path / "base.ptd"),
                             manifest=str(tmp_path / "base.pte.json"), outputs={"index": str(tmp_path / "f.json")})
    with pytest.raises(UserError, match=r"^foundation_weights //pkg:foundation: //pkg:base's .ptd cannot be read: "
                                        r".*base.ptd: corrupt: no FH01 header: not a .ptd, or cut short; rebuild "
                                        r"//pkg:base$"):
        foundation_action.run(config)
    assert not os.path.exists(config.outputs["index"])


def test_a_ptd_other_than_its_programs_is_refused_in_one_line(tmp_path):
    """The index records the .ptd its program's manifest names; another file (a stale or swapped
    one) is refused before any index is written."""
    _foundation(tmp_path, [])
    (tmp_path / "base.pte.json").write_text(json.dumps({"ptd": {"sha256": "0" * 64}, "backends": [], "toolchain": {}}))
    os.remove(tmp_path / "foundation.json")
    config = SimpleNamespace(label="//pkg:foundation", program="//pkg:base", ptd=str(tmp_path / "base.ptd"),
                             manifest=str(tmp_path / "base.pte.json"), outputs={"index": str(tmp_path / "foundation.json")})
    with pytest.raises(UserError) as e:
        foundation_action.run(config)
    assert str(e.value) == ("foundation_weights //pkg:foundation: //pkg:base's .ptd is not the one its manifest records; "
                            "rebuild //pkg:base")
    assert not os.path.exists(config.outputs["index"])
