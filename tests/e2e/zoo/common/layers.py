"""Layers shared by the zoo's mlp and conv models."""

import torch


def head(features, classes):
    """A small classifier head."""
    return torch.nn.Sequential(torch.nn.Linear(features, classes), torch.nn.ReLU())
