"""The generative tasks' modules: transformers' exportable wrappers (a static KV cache in buffers)
behind the calls ExecuTorch's runners make. Only the call signature is ours; the cache and the
attention are transformers' own (transformers.integrations.executorch)."""

import os

from torch import nn

from exporter.core.special_tokens import as_list


class ForRunner(nn.Module):
    """forward(tokens [1, seq], input_pos [seq]) -> logits [1, seq, vocab]: the call ExecuTorch's
    TextLLMRunner makes, passed to the exportable module's keyword inputs (its second positional
    input is inputs_embeds). `generation` is the model's own bos and eos ids (generation()), which
    the export records for llm_program's lowering."""

    def __init__(self, exportable, generation):
        super().__init__()
        self.exportable = exportable
        self.generation = generation

    def forward(self, tokens, input_pos):
        return self.exportable(input_ids=tokens, cache_position=input_pos)

    def causal_lm(self):
        """transformers' model itself (for its generate())."""
        return self.exportable.model


def generation(model, checkpoint_dir):
    """The bos and eos ids transformers' generate() uses for `model`: its generation config, which
    from_pretrained reads from a folder's generation_config.json, else from its config.json (or
    hf_model's config), and which of those it was; core/special_tokens.py takes them from here."""
    found = "config"
    if checkpoint_dir:
        saved = os.path.exists(os.path.join(checkpoint_dir, "generation_config.json"))
        found = "generation_config.json" if saved else "config.json"
    config = model.generation_config
    return {"bos_token_id": config.bos_token_id, "eos_token_id": as_list(config.eos_token_id), "from": found}


def decoder_only(model, max_cache_len, checkpoint_dir=None):
    """A causal LM behind the runner's forward, over a static cache of max_cache_len positions
    (TorchExportableModuleForDecoderOnlyLM picks the static or the hybrid sliding-window cache
    by the config)."""
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

    ids = generation(model, checkpoint_dir)
    model.generation_config.cache_implementation = "static"
    wrapper = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=max_cache_len)
    return ForRunner(wrapper.model, ids).eval()


def encoder(model):
    """An encoder-decoder's encoder as it is (T5's stack takes input_ids and attention_mask,
    Whisper's input_features); its ModelOutput becomes {"last_hidden_state": ...} at export.
    transformers' Seq2SeqLMEncoderExportableModule would take input_ids alone."""
    return model.get_encoder().eval()


def decoder_step(model, max_cache_len):
    """One decoder step over a static self-attention cache: transformers'
    Seq2SeqLMDecoderExportableModuleWithStaticCache, forward(decoder_input_ids [1, 1],
    encoder_hidden_states, cache_position [1]) -> logits. It reads the LM head as `lm_head`, which
    Whisper names proj_out: give it the model's output embeddings under that name."""
    from transformers.integrations.executorch import Seq2SeqLMDecoderExportableModuleWithStaticCache

    if not hasattr(model, "lm_head"):
        model.lm_head = model.get_output_embeddings()
    return Seq2SeqLMDecoderExportableModuleWithStaticCache(model, max_static_cache_length=max_cache_len,
                                                            batch_size=1).eval()


def component(task, model, max_cache_len=None, component=None, checkpoint_dir=None):
    """The module a generative task's export traces (see hf_models.build): the runner's LM, an
    encoder-decoder's encoder or decoder step, or the whole model (the tests' eager reference)."""
    if task == "text-generation":
        return decoder_only(model, max_cache_len, checkpoint_dir)
    if component == "encoder":
        return encoder(model)
    if component == "decoder":
        return decoder_step(model, max_cache_len)
    return model
