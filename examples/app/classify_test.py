"""The example app finds the .pte through runfiles and ranks classes as the eager model does."""

import torch

from examples.app import classify
from models.resnet import resnet18


def test_program_is_found_through_runfiles():
    assert classify.find_program().endswith("models/resnet_pte.pte")


def test_top_classes_match_the_eager_model():
    image = classify.example_image(seed=1)
    with torch.no_grad():
        expected = torch.softmax(resnet18()(image.unsqueeze(0))[0], dim=0).topk(5)
    ranked = classify.classify(image, top=5)
    assert [i for i, _ in ranked] == expected.indices.tolist()
    assert torch.allclose(torch.tensor([p for _, p in ranked]), expected.values, atol=1e-4)


def test_main_prints_a_ranking(capsys):
    assert classify.main(["--seed", "2", "--top", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[0].startswith("1. class ")
