"""torch_export's quantize: which linear layers torchao quantizes, which stay float (and the
record says why), and the one-line error when the group size fits no layer."""

import pytest
import torch

from exporter.actions import eager_quantize
from exporter.core.errors import UserError


def test_layers_the_group_does_not_divide_stay_float_and_are_named():
    model = torch.nn.Sequential(torch.nn.Linear(64, 24), torch.nn.ReLU(), torch.nn.Linear(24, 8))
    record = eager_quantize.apply(model, "8da4w", 32, "//pkg:ep")
    assert record == {"scheme": "8da4w", "group_size": 32, "layers": 1, "float_layers": {"2": "input width 24"}}
    assert type(model[0].weight) is not torch.nn.Parameter  # torchao's quantized weight tensor
    assert type(model[2].weight) is torch.nn.Parameter
    assert model(torch.randn(2, 64)).shape == (2, 8)


def test_a_group_that_fits_no_layer_fails_naming_the_widths():
    model = torch.nn.Sequential(torch.nn.Linear(20, 8), torch.nn.Linear(8, 4))
    with pytest.raises(UserError) as e:
        eager_quantize.apply(model, "8da4w", 32, "//pkg:ep")
    assert str(e.value) == ("torch_export //pkg:ep: quantize = '8da4w' with group_size = 32 fits no linear layer of "
                            "the model (input widths [8, 20]); set group_size to a divisor of those widths, e.g. 4, "
                            "or remove quantize")
