"""A small Llama from Hugging Face transformers, the way teams bring theirs: a LlamaForCausalLM
built from a LlamaConfig (weights seeded, nothing downloaded), made exportable by transformers'
own wrapper (TorchExportableModuleForDecoderOnlyLM: a static KV cache in buffers), behind the
forward ExecuTorch's LLM runner calls. Export it with strict = True: without TorchDynamo the
lowering of transformers' attention fails ("expected compiled_fn to be GraphModule")."""

import torch
from torch import nn


class ForRunner(nn.Module):
    """forward(tokens [1, seq], input_pos [seq]) -> logits [1, seq, vocab]: the runner's call,
    passed to the wrapper's keyword inputs (its second positional input is inputs_embeds)."""

    def __init__(self, exportable):
        super().__init__()
        self.exportable = exportable

    def forward(self, tokens, input_pos):
        return self.exportable(input_ids=tokens, cache_position=input_pos)


def exportable(model, max_cache_len):
    """A transformers causal LM behind the runner's forward, with a static cache of max_cache_len."""
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

    model.generation_config.cache_implementation = "static"
    wrapper = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=max_cache_len)
    return ForRunner(wrapper.model).eval()


def hf_llama(vocab=96, hidden=128, layers=2, heads=4, kv_heads=2, max_cache_len=32):
    """The zoo's Llama: grouped-query attention, RoPE, RMSNorm and SwiGLU, as Llama 3 has them."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=4 * hidden,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
                         max_position_embeddings=2 * max_cache_len, bos_token_id=0, eos_token_id=1,
                         pad_token_id=1)
    return exportable(LlamaForCausalLM(config).eval(), max_cache_len)


def from_checkpoint(checkpoint_dir, max_cache_len=32):
    """A causal LM from a checkpoint folder (config.json, *.safetensors), as a team's own weights
    arrive: torch_model(checkpoint_dir = glob([...])) passes the folder. Never downloads."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(checkpoint_dir, local_files_only=True, dtype=torch.float32)
    return exportable(model.eval(), max_cache_len)
