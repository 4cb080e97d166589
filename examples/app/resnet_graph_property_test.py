"""A consumer of the .pt2: checks properties of ResNet-18's exported graph in Python."""

import collections

import pytest
import torch
from runfiles import Runfiles


@pytest.fixture(scope="module")
def ep():
    return torch.export.load(Runfiles.Create().Rlocation("rules_torch_export/models/resnet_ep.pt2"))


def _calls(ep):
    return [n for n in ep.graph.nodes if n.op == "call_function"]


def test_batch_is_the_only_dynamic_dim_and_keeps_its_range(ep):
    (x,) = [n for n in ep.graph.nodes if n.op == "placeholder" and n.name in ep.graph_signature.user_inputs]
    batch, *rest = x.meta["val"].shape
    assert isinstance(batch, torch.SymInt) and rest == [3, 224, 224]
    vr = ep.range_constraints[batch.node.expr]
    assert (int(vr.lower), int(vr.upper)) == (1, 32)


def test_output_is_batch_by_1000_logits(ep):
    (out,) = [n for n in ep.graph.nodes if n.op == "output"][0].args[0]
    x = next(n for n in ep.graph.nodes if n.name in ep.graph_signature.user_inputs)
    assert out.meta["val"].shape[0].node.expr == x.meta["val"].shape[0].node.expr
    assert out.meta["val"].shape[1] == 1000


def test_resnet18_layer_counts(ep):
    ops = collections.Counter(str(n.target) for n in _calls(ep))
    # 1 stem + 16 block + 3 shortcut convolutions, each followed by a batch norm; 1 classifier.
    assert ops["aten.conv2d.default"] == 20
    assert ops["aten.batch_norm.default"] == 20
    assert ops["aten.linear.default"] == 1


def test_exported_in_eval_mode(ep):
    norms = [n for n in _calls(ep) if str(n.target) == "aten.batch_norm.default"]
    assert all(n.args[5] is False for n in norms)  # training=False: running stats, no updates
    assert not [n for n in _calls(ep) if "dropout" in str(n.target)]
    assert not [s for s in ep.graph_signature.output_specs if s.kind.name == "BUFFER_MUTATION"]


def test_weights_are_parameters_not_baked_constants(ep):
    kinds = collections.Counter(s.kind.name for s in ep.graph_signature.input_specs)
    assert kinds["PARAMETER"] == 20 + 20 * 2 + 2  # conv weights, bn weight+bias, fc weight+bias
    assert kinds["CONSTANT_TENSOR"] == 0
