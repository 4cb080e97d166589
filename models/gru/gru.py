"""A GRU sequence classifier: token embeddings, a GRU over a fixed window of tokens, masked
mean pooling of its outputs. Seeded weights.

The GRU is written out step by step (GRULayer computes what torch.nn.GRU computes, see
gru_test.py): torch's own aten.gru decomposes into a graph fixed to the traced batch size,
while this loop keeps the batch dynamic. The loop unrolls, so the window is static."""

import torch
from torch import nn

from models.common.layers import masked_mean


class GRULayer(nn.Module):
    """One batch-first GRU layer with nn.GRU's gate order (reset, update, new) and weights."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.input_gates = nn.Linear(input_size, 3 * hidden_size)
        self.hidden_gates = nn.Linear(hidden_size, 3 * hidden_size)

    def forward(self, x):
        gates_x = self.input_gates(x)  # every step's input projection at once
        h = x.new_zeros(x.shape[0], self.hidden_size)
        outputs = []
        for step in range(x.shape[1]):
            xr, xz, xn = self._split(gates_x[:, step])
            hr, hz, hn = self._split(self.hidden_gates(h))
            reset, update = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
            new = torch.tanh(xn + reset * hn)
            h = (1 - update) * new + update * h
            outputs.append(h)
        return torch.stack(outputs, dim=1)

    def _split(self, gates):
        # Slices, not chunk(): ExecuTorch's to_edge fixes the batch size of a chunk's input.
        n = self.hidden_size
        return gates[..., :n], gates[..., n:2 * n], gates[..., 2 * n:]


class GRUClassifier(nn.Module):
    def __init__(self, vocab=64, width=32, hidden=32, num_classes=4):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.gru = GRULayer(width, hidden)
        self.classifier = nn.Linear(hidden, num_classes)

    def forward(self, input_ids, attention_mask):
        outputs = self.gru(self.tokens(input_ids))
        return self.classifier(masked_mean(outputs, attention_mask))


def gru_classifier(num_classes=4):
    """The classifier in eval mode; torch's default initialisation under the exporter's seed."""
    torch.manual_seed(0)
    return GRUClassifier(num_classes=num_classes).eval()
