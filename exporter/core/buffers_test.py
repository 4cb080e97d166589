"""Mutable buffers in-process: which buffers a program mutates, their initial values in the
.pte, state across calls (numerics_test steps), quantization of a stateful model, and the
one-line errors for mutations ExecuTorch cannot lower."""

import os

import pytest
import torch

from exporter.actions import lower, quantize, registry
from exporter.checks import steps
from exporter.checks.contract import NumericsConfig
from exporter.core import buffers
from exporter.formats import pt2
from exporter.core.errors import Context, UserError
from exporter.tests import stateful_models

X = torch.ones(1, 4)


def _exported(module, args=(X,)):
    with torch.no_grad():
        return torch.export.export(module, args)


def _run(pte_path, inputs):
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(pte_path).load_method("forward")
    return [method.execute([x])[0] for x in inputs]


def test_mutations_follow_views_in_the_training_ir_and_the_signature_in_functional_ones():
    ep = _exported(stateful_models.counter())
    assert buffers.mutations(ep) == {"total": ["aten.add_.Tensor"]}
    functional = ep.run_decompositions({})
    assert list(buffers.mutations(functional)) == ["total"]
    step = _exported(stateful_models.KVCache().eval(), (torch.randn(1, 1, 8), torch.tensor([0])))
    assert buffers.mutations(step) == {"k_cache": ["aten.index_copy_.default"], "v_cache": ["aten.index_copy_.default"]}


@pytest.mark.parametrize("initialized, first", [(None, 5.0), (["total"], 5.0), ([], 0.0)])
def test_the_pte_keeps_the_initial_values_it_is_told_to(tmp_path, initialized, first):
    model = stateful_models.counter()
    program, state = lower.lower(_exported(model), [], initialized_buffers=initialized)
    path = tmp_path / "counter.pte"
    path.write_bytes(program.buffer)
    with torch.no_grad():
        added = model.scale(X)
    outputs = _run(str(path), [X, X])
    # ExecuTorch's Python runtime hands an uninitialised buffer zeros; an app's arena may not.
    torch.testing.assert_close(outputs[0], first + added)
    torch.testing.assert_close(outputs[1], first + 2 * added)
    assert state == {"total": {"dtype": "float32", "shape": [1, 4], "bytes": 16,
                               "initialized": first == 5.0, "methods": ["forward"]}}


def test_an_unknown_initialized_buffer_is_an_error():
    with pytest.raises(UserError, match="initialized_buffers names 'cache', which no method of the program "
                                        "mutates; list buffers it mutates \\(total\\)"):
        lower.lower(_exported(stateful_models.counter()), [], initialized_buffers=["cache"], label="//t:p")


def test_a_program_without_state_gets_no_record_and_no_new_bytes():
    ep = _exported(torch.nn.Linear(4, 4).eval())
    program, state = lower.lower(ep, [])
    assert state == {}
    with torch.no_grad():
        from executorch.exir import to_edge_transform_and_lower

        assert program.buffer == to_edge_transform_and_lower(ep).to_executorch().buffer


def _context():
    return Context("//t:p", exported=("//t:ep",), export=registry.ExportOptions())


@pytest.mark.parametrize("model, needles", [
    (stateful_models.AliasedBuffer, ["mutates buffer 'row' with aten.add_.Tensor", "shares memory with 'whole'",
                                     "register_buffer('row', t.clone())"]),
    (stateful_models.ResizedBuffer, ["mutates buffer 'history' with aten.resize_.default",
                                     "register the buffer at its final size"]),
])
def test_mutations_that_cannot_lower_name_the_buffer_and_the_operator(tmp_path, model, needles):
    path = str(tmp_path / "bad.pt2")
    pt2.save(_exported(model().eval(), (torch.ones(8),)), path)
    ep = pt2.load(path)
    with pytest.raises(Exception) as failure:
        lower.lower(ep, [])
    message = buffers.diagnose(ep, "forward", _context())
    assert message is not None, f"no diagnosis for {type(failure.value).__name__}: {failure.value}"
    for needle in needles:
        assert needle in message


def _steps_config(tmp_path, initialized):
    ep = _exported(stateful_models.counter())
    pt2_path, pte_path = str(tmp_path / "c.pt2"), str(tmp_path / "c.pte")
    pt2.save(ep, pt2_path)
    program, _ = lower.lower(pt2.load(pt2_path), [], initialized_buffers=initialized)
    with open(pte_path, "wb") as f:
        f.write(program.buffer)
    spec = {"dims": {}, "inputs": [{"name": "x", "value": {"tensor": {"shape": [1, 4], "dtype": "float32"}}}]}
    return {
        "label": "//t:steps", "program": "//t:c_pte", "pte": pte_path, "ptd": None, "method": "forward",
        "reference": "eager", "backends": [], "rtol": None, "atol": None, "inputs": [],
        "model": {"label": "//t:counter", "entry": "exporter.tests.stateful_models:counter",
                  "init_args": {}, "checkpoint": None, "import_roots": [os.path.abspath(".")]},
        "steps": [{"method": "forward", "dims": {}, "values": {}}] * 3,
        "method_programs": {"forward": {"exported_label": "//t:c_ep", "pt2": pt2_path, "spec": spec}},
    }


def test_steps_pass_when_the_program_carries_the_models_state(tmp_path):
    ok, report = steps.run(NumericsConfig.from_json(_steps_config(tmp_path, None)))
    assert ok, report
    assert "3 calls in order on one loaded program" in report
    assert "step 2 forward(): output 0" in report


def test_steps_fail_when_the_program_starts_from_another_state(tmp_path):
    ok, report = steps.run(NumericsConfig.from_json(_steps_config(tmp_path, [])))
    assert not ok
    assert "step 0 forward(): output 0" in report and "FAIL" in report


def test_quantizing_a_stateful_model_keeps_its_initial_state(tmp_path):
    model = stateful_models.counter()
    path = str(tmp_path / "c.pt2")
    pt2.save(_exported(model), path)
    spec = {"dims": {}, "inputs": [{"name": "x", "value": {"tensor": {"shape": [1, 4], "dtype": "float32"}}}]}
    config = registry.QuantizeConfig.from_json({
        "label": "//t:q", "identity": "", "exported_label": "//t:c_ep", "pt2": path, "spec_label": "//t:s",
        "spec": spec, "scheme": "int8_dynamic_per_channel"})
    converted, precision = quantize.quantize(pt2.load(path), config, [])
    assert precision == "float64"
    assert torch.equal(converted.get_buffer("total"), torch.full((1, 4), 5.0))
