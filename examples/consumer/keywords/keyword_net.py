"""A tiny keyword spotter: 1-D convolutions over 40 MFCC features per frame, mean over time,
a linear classifier. Seeded weights."""

import torch
from torch import nn


class KeywordNet(nn.Module):
    def __init__(self, features=40, channels=32, keywords=8):
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv1d(features, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv1d(channels, channels, 3, padding=1),
            nn.ReLU(),
        )
        self.classifier = nn.Linear(channels, keywords)

    def forward(self, mfcc):
        return self.classifier(self.convs(mfcc).mean(dim=2))


def keyword_net(keywords=8):
    """The network in eval mode; torch's default initialisation under a fixed seed."""
    torch.manual_seed(0)
    return KeywordNet(keywords=keywords).eval()
