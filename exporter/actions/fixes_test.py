"""Every change that an error message may suggest (core/errors.py SUGGESTIONS), applied: a table
of models that fail to export or lower, each with the change its message suggests, which must
take the build past that error. In-process, as the actions run (exporter/tests/failing_models.py
and the fixtures beside it hold the models)."""

import collections
import os

import pytest

from exporter.actions import export, lower, registry
from exporter.core import errors
from exporter.core.errors import UserError


def F(name):
    """The entry of a model in exporter/tests/failing_models.py."""
    return "exporter.tests.failing_models:" + name



def t(shape, dtype="float32", fill=None):
    """A shape_spec tensor, as the rule writes it."""
    return {"tensor": {"shape": list(shape), "dtype": dtype, "fill": fill}}


Row = collections.namedtuple("Row", "kind model inputs dims options backends needles change")
Row.__doc__ = """kind: the suggestion (errors.SUGGESTIONS); model, inputs, dims, options (torch_export's),
backends: what fails; needles: what its message must say, the suggestion included; change: the
fields that differ in the build that applies the suggestion."""

BATCH = {"b": {"min": 1, "max": 4, "example": 2}, "s": {"min": 1, "max": 8, "example": 3}}
POSITION = t([1], "int64", fill=1)

ROWS = [
    Row("real_tensors", F("Spectrum"), {"x": t([2, 8])}, {}, {}, [],
        ["aten.abs.default (in exporter.tests.failing_models.Spectrum, at its abs call) takes a complex64 tensor",
         "made by aten.fft_rfft.default", "ExecuTorch has no complex dtypes",
         "mismatched dtypes: aten.abs.default (self complex64 -> float32)", "compute with real tensors instead"],
        {"model": F("RealSpectrum")}),
    Row("strict_true", F("AttributeCache"), {"x": t([1, 8]), "pos": POSITION}, {}, {}, ["xnnpack"],
        ["writes in place (aten.index_copy_.default) to a tensor that the model reaches outside its registered buffers",
         "set strict = True on torch_export //t:ep"],
        {"options": {"strict": True}}),
    Row("write_registered_buffer", F("AttributeCache"), {"x": t([1, 8]), "pos": POSITION}, {}, {"strict": False}, [],
        ["write to a registered buffer itself"],
        {"model": F("BufferCache")}),
    Row("portable_backend", F("MaskedMean"), {"x": t(["b", "s", 4]), "mask": t(["b", "s"], "bool")}, BATCH, {},
        ["xnnpack"],
        ["the XNNPACK delegate cannot take it at aten.unsqueeze_copy.default", "XNNPACK reshape only supports 1 "
         "dynamic dimension", "set backends = [] on //t:pte to run it on the portable runtime"],
        {"backends": []}),
    Row("one_dynamic_size", F("MaskedMean"), {"x": t(["b", "s", 4]), "mask": t(["b", "s"], "bool")}, BATCH, {},
        ["xnnpack"],
        ["make all but one of the input's dynamic sizes static in //t:spec"],
        {"inputs": {"x": t(["b", 3, 4]), "mask": t(["b", 3], "bool")}, "dims": {"b": BATCH["b"]}}),
    Row("decompose_custom_op", F("CallsCustomOp"), {"x": t([2, 3])}, {}, {}, [],
        ["no kernel for failing_models.scaled_tanh",
         'set decompose = ["failing_models.scaled_tanh"] and ir = "inference" on torch_export //t:ep'],
        {"options": {"decompose": ["failing_models.scaled_tanh"], "ir": "inference"}}),
    Row("unroll_control_flow", F("Doubling"), {"x": t([3]), "limit": t([])}, {}, {}, [],
        ["ExecuTorch cannot run torch.ops.higher_order.while_loop", "unroll it to a bounded number of steps"],
        {"model": F("UnrolledDoubling")}),
    Row("dim_max", F("Scale"), {"x": t(["n", 3])}, {"n": {"min": 1, "max": None, "example": 2}}, {}, [],
        ['inputs["x"] axis 0 (dim "n") has no max', 'give dims["n"] a max there'],
        {"dims": {"n": {"min": 1, "max": 16, "example": 2}}}),
    Row("buffer_final_size", "exporter.tests.stateful_models:ResizedBuffer", {"x": t([8])}, {}, {}, [],
        ["mutates buffer 'history' with aten.resize_.default", "register the buffer at its final size"],
        {"model": F("FinalSizeBuffer")}),
    Row("separate_buffer", "exporter.tests.stateful_models:AliasedBuffer", {"x": t([8])}, {}, {}, [],
        ["shares memory with 'whole'", "register 'row' as a tensor of its own"],
        {"model": F("SeparateBuffer")}),
    Row("shape_spec_edit", "exporter.tests.spec_models:Shifted",
        {"x": t(["dx"]), "y": t(["dy"]), "z": t(["2*dy"])},
        {"dx": {"min": 4, "max": 256, "example": 4}, "dy": {"min": None, "max": None, "example": 5}}, {}, [],
        ['Change the shape_spec: inputs["y"] axis 0 becomes "dx+1"; inputs["z"] axis 0 becomes "2*dx+2"; '
         'remove dims["dy"]'],
        {"inputs": {"x": t(["dx"]), "y": t(["dx+1"]), "z": t(["2*dx+2"])},
         "dims": {"dx": {"min": 4, "max": 256, "example": 4}}}),
    Row("static_size", "exporter.tests.spec_models:FourColumns",
        {"x": {"tensor": {"shape": [8, 4], "dtype": "float32", "hints": ["STATIC", "DYNAMIC"]}}}, {}, {}, [],
        ['make inputs["x"] axis 1 static: write 4 there'],
        {"inputs": {"x": t([8, 4])}}),
    Row("bound_data_dependent", "examples.tutorial.data_dependent:UncheckedBranch",
        {"x": t([], "int64", fill=3), "y": t([4])}, {}, {}, [],
        ["Could not guard on data-dependent expression", "express the branch with torch.cond"],
        {"model": F("CondBranch")}),
    Row("register_output_class", F("ReturnsBoxes"), {"x": t([2, 3])}, {}, {}, [],
        ["model //t:model returns exporter.tests.failing_models.Boxes, which torch.export cannot take apart",
         "register it with torch.export.register_dataclass(Boxes) where the class is defined"],
        {"model": F("ReturnsRegisteredBoxes")}),
    Row("strict_false", "examples.tutorial.non_strict:UsesId", {"x": t([3, 3])}, {}, {"strict": True}, [],
        ["strict torch.export (TorchDynamo) cannot trace model //t:model", "Set strict = False on torch_export //t:ep"],
        {"options": {"strict": False}}),
]


def build(folder, model, inputs, dims, options, backends):
    """Exports the model (an entry) and lowers it, as the actions do; returns the error message or None."""
    os.makedirs(folder)
    identity = os.path.join(folder, "identity.txt")
    with open(identity, "w") as f:
        f.write("python 3\n")
    spec = {"dims": dims, "inputs": [{"name": k, "value": v} for k, v in inputs.items()]}
    pt2 = os.path.join(folder, "ep.pt2")
    try:
        export.run(registry.ExportConfig.from_json(dict(options, **{
            "label": "//t:ep", "identity": identity, "spec_label": "//t:spec", "spec": spec,
            "model": {"label": "//t:model", "entry": model, "import_roots": ["."]},
            "outputs": {"pt2": pt2, "manifest": pt2 + ".json"}})))
        lower.lowered(registry.LowerConfig.from_json({
            "label": "//t:pte", "identity": identity, "backends": list(backends), "exported_label": "//t:ep",
            "pt2": pt2, "spec_label": "//t:spec", "spec": spec, "export": options,
            "outputs": {"pte": os.path.join(folder, "p.pte"), "manifest": os.path.join(folder, "p.pte.json")}}))
    except UserError as e:
        return str(e)
    return None


# The message of each failing build, by its fields: rows whose failing build is the same (two
# suggestions in one message) build it once.
_FAILED = {}


def failed_build(folder, before):
    """build()'s message for the failing build `before` (a dict of build's fields), built once."""
    key = repr(sorted(before.items()))
    if key not in _FAILED:
        _FAILED[key] = build(folder, **before)
    return _FAILED[key]


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.kind)
def test_the_suggested_change_takes_the_build_past_the_error(tmp_path, row):
    before = {"model": row.model, "inputs": row.inputs, "dims": row.dims, "options": row.options, "backends": row.backends}
    message = failed_build(tmp_path / "before", before)
    assert message is not None, f"{row.model} built: the row shows no error"
    assert "\n" not in message
    for needle in row.needles:
        assert needle in message, message
    after = dict(before, **row.change)
    assert build(tmp_path / "after", **after) is None


def test_every_suggestion_is_applied_by_a_row():
    assert sorted({row.kind for row in ROWS}) == sorted(errors.SUGGESTIONS)


def test_a_suggestion_outside_the_table_cannot_be_made():
    with pytest.raises(KeyError, match="not in errors.SUGGESTIONS"):
        errors.fix("make_it_work", "set everything right")
