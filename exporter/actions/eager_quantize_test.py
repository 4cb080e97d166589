"""torch_export's quantize: which linear layers torchao quantizes, which stay float (and the
record says why), and the one-line error when the group size fits no layer. Its
embedding_quantize: ExecuTorch's quantized tables, and the errors when they fit no table."""

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


class _Tables(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.embed, self.head = torch.nn.Embedding(16, width), torch.nn.Linear(width, 16)

    def forward(self, ids):
        return self.head(self.embed(ids))


def test_tables_become_executorchs_quantized_embedding():
    model = _Tables(64).eval()
    table = model.embed.weight.detach().clone()
    record = eager_quantize.quantize_embeddings(model, "4,32", "//pkg:ep")
    assert record == {"scheme": "4,32", "bits": 4, "group_size": 32, "tables": ["embed"]}
    assert not isinstance(model.embed, torch.nn.Embedding)
    with torch.no_grad():  # as the export action traces
        graph = str(torch.export.export(model, (torch.arange(16),)).graph)
    assert "quantized_decomposed.embedding_4bit.dtype" in graph
    with torch.no_grad():
        noise = model.embed(torch.arange(16)) - table
    assert 10 * torch.log10(table.square().sum() / noise.square().sum()) > 15  # dB; int4 in groups: about 20


@pytest.mark.parametrize("model, spec, message", [
    (torch.nn.Linear(4, 4), "4,32", "embedding_quantize = '4,32' fits no layer: the model has no nn.Embedding; "
                                    "remove embedding_quantize"),
    (_Tables(48), "8,32", "embedding_quantize = '8,32': group 32 does not divide the width of embed ([48]); set "
                          "the group to a divisor of it, or 0 for one scale per row"),
])
def test_tables_the_group_does_not_fit_fail_in_one_line(model, spec, message):
    with pytest.raises(UserError) as e:
        eager_quantize.quantize_embeddings(model, spec, "//pkg:ep")
    assert str(e.value) == "torch_export //pkg:ep: " + message
