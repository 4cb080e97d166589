"""An image classifier with data-dependent control flow: torch.cond picks one of two refinement
branches per call, on the image's mean brightness. Seeded weights."""

import torch
from torch import nn

from models.common.layers import ConvBNAct, ImageHead


class GatedRefiner(nn.Module):
    def __init__(self, num_classes=10, channels=16):
        super().__init__()
        self.stem = nn.Sequential(ConvBNAct(3, channels, 3, 2), ConvBNAct(channels, channels, 3, 2))
        self.bright = ConvBNAct(channels, channels, 3)
        self.dark = ConvBNAct(channels, channels, 1)
        self.head = ImageHead(channels, num_classes)

    def forward(self, x):
        features = self.stem(x)
        # The whole batch takes one branch; both branches return the same shape.
        refined = torch.cond(x.mean() > 0, self.bright, self.dark, (features,))
        return self.head(refined)


def gated_refiner(num_classes=10):
    """The network in eval mode; torch's default initialisation under the exporter's seed."""
    torch.manual_seed(0)
    return GatedRefiner(num_classes=num_classes).eval()
