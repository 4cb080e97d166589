"""Calibration batches and PT2E quantization, in-process: the batch files and the entry, every
check against the spec, canonical bytes, and a quantized .pt2 that keeps its dynamic dim."""

import json

import numpy
import pytest
import torch

from exporter.actions import calibrate, quantize, registry
from exporter.checks import numerics
from exporter.core.errors import UserError
from exporter.tests import export_harness
from exporter.tests.export_harness import tensor

SPEC = {"dims": {"n": {"min": 1, "max": 8}},
        "inputs": [{"name": "x", "value": tensor(["n", 4])}, {"name": "y", "value": tensor(["2*n", 4])}]}
WHO = "calibration_data //t:calib"


def _check(batches):
    return calibrate.check_batches(batches, SPEC, WHO, "//t:spec")


def _pair(n=2, m=None):
    return {"x": torch.randn(n, 4), "y": torch.randn(2 * n if m is None else m, 4)}


def test_batches_that_fit_are_kept_in_the_spec_order():
    batch = {"y": torch.randn(4, 4), "x": torch.randn(2, 4)}
    (checked,) = _check([batch])
    assert list(checked) == ["x", "y"]


@pytest.mark.parametrize("batches, needles", [
    ([], ["has no batches"]),
    ([_pair(), torch.randn(2, 4)], ["batch 1 is a Tensor", "{'x': ..., 'y': ...}"]),
    ([{"x": torch.randn(2, 4)}], ["batch 0 has inputs ['x']", "declares ['x', 'y']"]),
    ([_pair(9)], ['batch 0, input "x" axis 0 has size 9', "outside its range [1, 8]"]),
    ([_pair(2, m=5)], ['input "y" axis 0 has size 5', "'n' (2*n) outside its range"]),
    ([_pair(2, m=6)], ['input "y" axis 0 has size 6', "dim 'n' is 3 there but 2 elsewhere"]),
    ([{"x": torch.randn(2, 5), "y": torch.randn(4, 4)}], ["axis 1 has size 5", "fixes it at 4"]),
    ([{"x": torch.randn(2, 4, 1), "y": torch.randn(4, 4)}], ["has shape [2, 4, 1]", "2 axes"]),
    ([{"x": torch.zeros(2, 4, dtype=torch.int64), "y": torch.randn(4, 4)}], ["is int64", "declares float32"]),
])
def test_a_batch_that_does_not_fit_names_the_batch_the_input_and_the_axis(batches, needles):
    with pytest.raises(UserError) as e:
        _check(batches)
    assert str(e.value).startswith(WHO)
    for needle in needles:
        assert needle in str(e.value)


def _config(tmp_path, **fields):
    identity = tmp_path / "identity.txt"
    identity.write_text("python 3\n")
    data = {"label": "//t:calib", "identity": str(identity), "spec_label": "//t:spec", "spec": SPEC,
            "outputs": {"batches": str(tmp_path / "c.calib.pt"), "manifest": str(tmp_path / "c.calib.json")}}
    data.update(fields)
    return registry.CalibrationConfig.from_json(data)


def test_pt_and_npz_files_make_the_same_canonical_bytes(tmp_path):
    batches = [_pair(2), _pair(3)]
    torch.save(batches, tmp_path / "all.pt")
    for i, b in enumerate(batches):
        numpy.savez(tmp_path / f"b{i}.npz", **{k: v.numpy() for k, v in b.items()})
    calibrate.run(_config(tmp_path, files=[str(tmp_path / "all.pt")]))
    from_pt = (tmp_path / "c.calib.pt").read_bytes()
    calibrate.run(_config(tmp_path, files=[str(tmp_path / "b0.npz"), str(tmp_path / "b1.npz")]))
    assert (tmp_path / "c.calib.pt").read_bytes() == from_pt
    loaded = calibrate.load(str(tmp_path / "c.calib.pt"))
    assert len(loaded) == 2 and torch.equal(loaded[1]["y"], batches[1]["y"])
    record = json.loads((tmp_path / "c.calib.json").read_text())
    assert record["batches"]["count"] == 2
    assert record["shapes"] == [{"x": [2, 4], "y": [4, 4]}, {"x": [3, 4], "y": [6, 4]}]


def test_an_unreadable_file_says_how_to_save_one(tmp_path):
    (tmp_path / "bad.pt").write_bytes(b"not a pickle")
    with pytest.raises(UserError, match="bad.pt cannot be read.*torch.save"):
        calibrate.run(_config(tmp_path, files=[str(tmp_path / "bad.pt")]))


def test_an_entry_runs_seeded_and_twice(tmp_path):
    module = tmp_path / "calib_entries.py"
    module.write_text(
        "import torch\n"
        "CALLS = []\n"
        "def seeded(count):\n"
        "    CALLS.append(1)\n"
        "    return ({'x': torch.randn(2, 4), 'y': torch.randn(4, 4)} for _ in range(count))\n"
        "def drifting():\n"
        "    CALLS.append(1)\n"
        "    return [{'x': torch.full((2, 4), float(len(CALLS))), 'y': torch.zeros(4, 4)}]\n"
    )
    entry = {"import_roots": [str(tmp_path)]}
    calibrate.run(_config(tmp_path, entry="calib_entries:seeded", init_args={"count": 3}, **entry))
    first = (tmp_path / "c.calib.pt").read_bytes()
    calibrate.run(_config(tmp_path, entry="calib_entries:seeded", init_args={"count": 3}, **entry))
    assert (tmp_path / "c.calib.pt").read_bytes() == first  # seeded: the same draws every run
    with pytest.raises(UserError, match="gave different batches on two calls"):
        calibrate.run(_config(tmp_path, entry="calib_entries:drifting", **entry))
    with pytest.raises(UserError, match=r"with init_args \{'size': 3\} raised TypeError"):
        calibrate.run(_config(tmp_path, entry="calib_entries:seeded", init_args={"size": 3}, **entry))


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean(dim=(2, 3)))


def conv_net():
    torch.manual_seed(0)
    return ConvNet().eval()


@pytest.mark.parametrize("scheme", sorted(quantize.SCHEMES))
def test_every_scheme_quantizes_and_keeps_the_dynamic_batch(tmp_path, scheme):
    dims = {"batch": {"min": 1, "max": 6}}
    config = export_harness.config_for(tmp_path, "exporter.actions.quantize_test:conv_net",
                                       {"x": tensor(["batch", 3, 8, 8])}, dims)
    export_harness.run_export(config)
    calibration = None
    if quantize.SCHEMES[scheme][1]:
        generator = torch.Generator().manual_seed(1)
        batches = [{"x": torch.randn(4, 3, 8, 8, generator=generator)} for _ in range(2)]
        (tmp_path / "c.calib.pt").write_bytes(calibrate.serialize(batches))
        calibration = {"label": "//t:calib", "batches": str(tmp_path / "c.calib.pt")}
    quantize.run(registry.QuantizeConfig.from_json({
        "label": "//t:q", "identity": config["identity"], "exported_label": "//test:ep",
        "pt2": config["outputs"]["pt2"], "spec_label": "//test:spec", "spec": config["spec"],
        "scheme": scheme, "calibration": calibration,
        "outputs": {"pt2": str(tmp_path / "q.pt2"), "manifest": str(tmp_path / "q.pt2.json")},
    }))
    record = json.loads((tmp_path / "q.pt2.json").read_text())
    assert record["quantization"]["scheme"] == scheme
    assert record["quantization"]["precision"] == "float64"
    assert record["range_constraints"] == {"batch": {"min": 1, "max": 6}}
    assert any(op.startswith("quantized_decomposed.") for op in record["operators"])
    quantized = torch.export.load(str(tmp_path / "q.pt2")).module()
    x = torch.randn(5, 3, 8, 8)
    assert numerics.sqnr_db(quantized(x), conv_net()(x)) > 20


@torch.library.custom_op("rte_test::float32_only", mutates_args=())
def float32_only(x: torch.Tensor) -> torch.Tensor:
    if x.dtype != torch.float32:
        raise RuntimeError(f"float32_only takes float32, not {x.dtype}")
    return x * 2


@float32_only.register_fake
def _(x):
    return torch.empty_like(x)


class Float32OnlyNet(ConvNet):
    def forward(self, x):
        return super().forward(torch.ops.rte_test.float32_only(x))


def float32_only_net():
    torch.manual_seed(0)
    return Float32OnlyNet().eval()


def test_a_model_that_cannot_run_in_float64_is_calibrated_in_float32_and_says_so(tmp_path, capsys):
    config = export_harness.config_for(tmp_path, "exporter.actions.quantize_test:float32_only_net",
                                       {"x": tensor(["batch", 3, 8, 8])}, {"batch": {"min": 1, "max": 6}})
    export_harness.run_export(config)
    batches = [{"x": torch.randn(4, 3, 8, 8, generator=torch.Generator().manual_seed(1))}]
    (tmp_path / "c.calib.pt").write_bytes(calibrate.serialize(batches))
    quantize.run(registry.QuantizeConfig.from_json({
        "label": "//t:q", "identity": config["identity"], "exported_label": "//test:ep",
        "pt2": config["outputs"]["pt2"], "spec_label": "//test:spec", "spec": config["spec"],
        "calibration": {"label": "//t:calib", "batches": str(tmp_path / "c.calib.pt")},
        "outputs": {"pt2": str(tmp_path / "q.pt2"), "manifest": str(tmp_path / "q.pt2.json")},
    }))
    record = json.loads((tmp_path / "q.pt2.json").read_text())
    assert record["quantization"]["precision"] == "float32"
    out = capsys.readouterr().out
    assert "calibration in float64 failed (RuntimeError: float32_only takes float32, not torch.float64)" in out
    assert "the scales may differ between CPUs" in out


def test_sqnr_and_top1():
    expected = torch.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    assert numerics.sqnr_db(expected, expected) == float("inf")
    assert numerics.sqnr_db(expected * 1.1, expected) == pytest.approx(20.0)  # noise at a tenth
    assert numerics.top1_matches(torch.tensor([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]), expected) == (1, 2)
    assert numerics.top1_matches(torch.ones(3), torch.ones(3)) is None
