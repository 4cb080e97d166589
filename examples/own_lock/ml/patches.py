"""An image classifier whose code imports einops, a package the rules' lock does not have: it
reaches the export because this workspace's requirements.lock pins it."""

import einops
import torch
from torch import nn


class PatchClassifier(nn.Module):
    def __init__(self, patch=4, channels=3, width=32, classes=10):
        super().__init__()
        self.patch = patch
        self.embed = nn.Linear(patch * patch * channels, width)
        self.head = nn.Linear(width, classes)

    def forward(self, image):
        patches = einops.rearrange(image, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=self.patch, p2=self.patch)
        return self.head(einops.reduce(torch.relu(self.embed(patches)), "b n d -> b d", "mean"))


def patch_classifier():
    torch.manual_seed(0)
    return PatchClassifier().eval()
