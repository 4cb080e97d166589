"""GRULayer, the zoo's unrolled GRU, matches torch.nn.GRU when it has nn.GRU's weights."""

import pytest
import torch

from models.gru.gru import GRULayer, gru_classifier


@pytest.mark.parametrize("batch,steps", [(1, 8), (3, 5)])
def test_gru_layer_matches_torch_gru(batch, steps):
    torch.manual_seed(1)
    reference = torch.nn.GRU(6, 4, batch_first=True)
    layer = GRULayer(6, 4)
    with torch.no_grad():
        layer.input_gates.weight.copy_(reference.weight_ih_l0)
        layer.input_gates.bias.copy_(reference.bias_ih_l0)
        layer.hidden_gates.weight.copy_(reference.weight_hh_l0)
        layer.hidden_gates.bias.copy_(reference.bias_hh_l0)
        x = torch.randn(batch, steps, 6)
        expected, _ = reference(x)
        torch.testing.assert_close(layer(x), expected, rtol=1e-5, atol=1e-6)


def test_padding_is_ignored():
    model = gru_classifier()
    ids = torch.randint(0, 64, (2, 8))
    mask = torch.tensor([[True] * 5 + [False] * 3] * 2)
    padded = ids.clone()
    padded[:, 5:] = 0
    with torch.no_grad():
        # Masked positions leave the pooled outputs of the real tokens unchanged.
        torch.testing.assert_close(model(ids, mask), model(padded, mask))
