"""A small Qwen3 from Hugging Face transformers (from this workspace's lock), for ExecuTorch's
LLM runner: built from a Qwen3Config with seeded weights (nothing downloaded) and made
exportable by transformers' own wrapper, which keeps a static KV cache in buffers."""

import torch
from torch import nn


class RunnerForward(nn.Module):
    """The runner's forward(tokens [1, seq], input_pos [seq]) -> logits [1, seq, vocab], passed
    to the wrapper's keyword inputs."""

    def __init__(self, wrapped):
        super().__init__()
        self.wrapped = wrapped

    def forward(self, tokens, input_pos):
        return self.wrapped(input_ids=tokens, cache_position=input_pos)


def qwen3(vocab=96, hidden=64, layers=2, max_cache_len=32):
    from transformers import Qwen3Config, Qwen3ForCausalLM
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

    torch.manual_seed(0)
    config = Qwen3Config(vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                         head_dim=hidden // 4, max_position_embeddings=2 * max_cache_len,
                         bos_token_id=0, eos_token_id=1, pad_token_id=1)
    model = Qwen3ForCausalLM(config).eval()
    model.generation_config.cache_implementation = "static"
    wrapper = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=max_cache_len)
    return RunnerForward(wrapper.model).eval()
