"""tiny_lm with the forward ExecuTorch's LLM runner calls: forward(tokens [1, seq], input_pos
[seq]) -> logits [1, seq, vocab]. The runner passes consecutive positions (the prompt's, then
one per new token), so the first is where the call starts."""

from torch import nn

from models.llm.tiny_lm import tiny_lm


class ForRunner(nn.Module):
    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, tokens, input_pos):
        return self.lm(tokens, input_pos[:1])


def tiny_lm_for_runner(**kwargs):
    """tiny_lm (its defaults: a 96-token vocabulary, 32 positions) behind the runner's forward."""
    return ForRunner(tiny_lm(**kwargs)).eval()
