"""Runs //models:resnet_pte in the ExecuTorch runtime and compares it with the eager model."""

import pytest
import torch
from executorch.runtime import Runtime
from runfiles import Runfiles

from models.resnet import resnet18

# XNNPACK reorders float32 accumulations; ResNet-18's logits stay within this of eager.
ATOL = 1e-3
RTOL = 1e-3


@pytest.fixture(scope="module")
def program():
    path = Runfiles.Create().Rlocation("rules_torch_export/models/resnet_pte.pte")
    return Runtime.get().load_program(path)


@pytest.fixture(scope="module")
def eager():
    return resnet18(num_classes=1000)


@pytest.mark.parametrize("batch", [1, 2, 32])
def test_pte_matches_eager(program, eager, batch):
    x = torch.randn(batch, 3, 224, 224, generator=torch.Generator().manual_seed(batch))
    (actual,) = program.load_method("forward").execute([x])
    with torch.no_grad():
        expected = eager(x)
    assert actual.shape == (batch, 1000)
    torch.testing.assert_close(actual, expected, atol=ATOL, rtol=RTOL)


def test_method_signature(program):
    meta = program.load_method("forward").metadata
    assert meta.num_inputs() == 1
    assert meta.num_outputs() == 1
    # Memory is planned for the largest batch that //models:image_batch allows.
    assert list(meta.input_tensor_meta(0).sizes()) == [32, 3, 224, 224]
