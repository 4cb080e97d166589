"""Models whose forward returns a structured container, with no wrapper: a named tuple, a
registered dataclass, nested dicts, and transformers' ModelOutput (a BertForMaskedLM from a
tiny seeded config). core/output_tree.py makes their programs loadable without these classes."""

import dataclasses
import typing

import torch
from torch import nn


class Scores(typing.NamedTuple):
    logits: torch.Tensor
    features: torch.Tensor


@dataclasses.dataclass
class Detections:
    boxes: torch.Tensor
    scores: torch.Tensor


# A dataclass output must be a registered pytree node for torch.export to trace it.
torch.export.register_dataclass(Detections, serialized_type_name="tests.structured_outputs.Detections")


class _Base(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Linear(8, 16)
        self.head = nn.Linear(16, 4)

    def parts(self, x):
        features = torch.relu(self.body(x))
        return self.head(features), features


class NamedTupleModel(_Base):
    def forward(self, x):
        return Scores(*self.parts(x))


class DataclassModel(_Base):
    def forward(self, x):
        logits, features = self.parts(x)
        return Detections(boxes=features[:, :4], scores=logits.softmax(-1))


class DictModel(_Base):
    def forward(self, x):
        logits, features = self.parts(x)
        return {"logits": logits, "extra": {"features": features, "norm": features.norm(dim=-1)}}


def bert_mlm():
    """A BertForMaskedLM as transformers builds it: forward returns a MaskedLMOutput."""
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    return BertForMaskedLM(config)
