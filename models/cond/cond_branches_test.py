"""//models/cond:cond_pte keeps both torch.cond branches: bright and dark images each match
the eager model, and the two branches compute different things."""

import pytest
import torch
from executorch.runtime import Runtime
from runfiles import Runfiles

from models.cond.gated import gated_refiner


@pytest.fixture(scope="module")
def method():
    path = Runfiles.Create().Rlocation("rules_torch_export/models/cond/cond_pte.pte")
    return Runtime.get().load_program(path).load_method("forward")


@pytest.fixture(scope="module")
def eager():
    return gated_refiner()


def _images(batch, offset):
    return torch.randn(batch, 3, 64, 64, generator=torch.Generator().manual_seed(batch)) + offset


@pytest.mark.parametrize("batch", [1, 4, 16])
@pytest.mark.parametrize("offset", [-0.5, 0.5])
def test_each_branch_matches_eager(method, eager, batch, offset):
    x = _images(batch, offset)
    (actual,) = method.execute([x])
    with torch.no_grad():
        expected = eager(x)
    torch.testing.assert_close(actual, expected, rtol=1e-3, atol=1e-4)


def test_branches_differ(eager):
    x = _images(2, 0.5)
    with torch.no_grad():
        features = eager.stem(x)
        bright, dark = eager.head(eager.bright(features)), eager.head(eager.dark(features))
    assert not torch.allclose(bright, dark, atol=1e-3), "both branches compute the same; the test could not tell them apart"
