"""Classifies one image with //models:resnet_pte in the ExecuTorch runtime: an example app.

    ./bazelw run //examples/app:classify [-- --seed 3 --top 5]

The image is synthetic (a seeded gradient with noise) so the example needs no files, and
ResNet-18's weights are seeded, not trained: the class numbers show the plumbing, not a
prediction.
"""

import argparse
import os
import sys

import torch
from executorch.runtime import Runtime
from runfiles import Runfiles

# The .pte's runfiles path: <workspace name>/<package>/<target>.pte.
PROGRAM = "rules_torch_export/models/resnet_pte.pte"
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


def find_program():
    """The .pte's path, through the runfiles of `bazel run`, `bazel test` or a built binary."""
    runfiles = Runfiles.Create()
    path = runfiles.Rlocation(PROGRAM) if runfiles else None
    if not path or not os.path.exists(path):
        raise FileNotFoundError(f"{PROGRAM} is not in the runfiles; add //models:resnet_pte to `data`")
    return path


def example_image(seed=0):
    """A 3x224x224 image in [0, 1]: a colour gradient plus seeded noise, ImageNet-normalised."""
    ramp = torch.linspace(0, 1, 224)
    image = torch.stack([ramp.view(1, -1).expand(224, 224), ramp.view(-1, 1).expand(224, 224),
                         ramp.flip(0).view(1, -1).expand(224, 224)])
    noise = torch.rand(3, 224, 224, generator=torch.Generator().manual_seed(seed))
    return ((0.8 * image + 0.2 * noise) - MEAN) / STD


def classify(image, top=5):
    """[(class index, probability)] for the `top` most likely classes of one image."""
    method = Runtime.get().load_program(find_program()).load_method("forward")
    (logits,) = method.execute([image.unsqueeze(0)])
    probabilities = torch.softmax(logits[0], dim=0)
    values, indices = probabilities.topk(top)
    return [(int(i), float(v)) for i, v in zip(indices, values)]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic image")
    parser.add_argument("--top", type=int, default=5, help="how many classes to print")
    args = parser.parse_args(argv)
    try:
        ranked = classify(example_image(args.seed), args.top)
    except FileNotFoundError as e:
        print(f"classify: {e}", file=sys.stderr)
        return 1
    for rank, (index, probability) in enumerate(ranked, 1):
        print(f"{rank}. class {index:4d}  p = {probability:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
