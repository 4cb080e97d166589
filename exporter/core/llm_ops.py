"""ExecuTorch's LLM operators in a transformers language model (torch_export's and llm_program's
`llm_ops`), applied to the eager model before export, as ExecuTorch's export_llm applies them to its
own Llama (examples/models/llama/source_transformation: sdpa.py, custom_kv_cache.py):

  "sdpa"      attention is llama::custom_sdpa, which reads the cache in place from the call's start
              position, causally, without a mask or repeated key-value heads;
  "kv_cache"  the static cache keeps ExecuTorch's layout [batch, position, head, dim] and is written
              with llama::update_cache; custom_sdpa then reads it with no transpose ("sdpa" needed).

The model is hf_model's text-generation module (core/hf_generation.py: transformers' exportable
wrapper over a StaticCache). The kernels live in the wheel's libcustom_ops_aot_lib.so, which
importing executorch.extension.llm.custom_ops.custom_ops loads (core/runtime_kernels.py).
"""

import inspect

import torch

from exporter.core.errors import UserError

OPS = ("sdpa", "kv_cache")
ATTENTION = "executorch_custom_sdpa"  # the name under transformers' attention and mask registries
# Attention arguments custom_sdpa has no counterpart for: a model that passes one is refused.
_UNSUPPORTED = ("softcap", "sliding_window", "s_aux", "sinks")
# The fix of a refusal: llm_program may have turned them on by default (docs/llm.md, "ExecuTorch's
# LLM operators").
_FIX = "set llm_ops = [] in its llm_program (or remove torch_export's llm_ops)"


def _start_pos(layer, length):
    """The call's first position as a size (the wrapper copied cache_position[0] into
    cumulative_length before the model ran), written as start % (cache length - length + 1), which
    is start for every call that fits the cache. update_cache checks start + length <= cache
    length; on the plain start, torch would turn that into start <= cache length - 2 (it takes a
    traced length as at least 2), and the last position could not be decoded."""
    start = layer.cumulative_length.item()
    torch._check_is_size(start)
    torch._check(start < layer.max_cache_len)
    return start % (layer.max_cache_len - length + 1)


def _in_place_update(layer):
    """layer.update writing [batch, position, head, dim] caches with llama::update_cache."""
    def update(key_states, value_states, *args, **kwargs):
        layer.start_pos = _start_pos(layer, key_states.shape[2])
        torch.ops.llama.update_cache(key_states.transpose(1, 2), layer.keys, layer.start_pos)
        torch.ops.llama.update_cache(value_states.transpose(1, 2), layer.values, layer.start_pos)
        return layer.keys, layer.values
    return update


def _transposed_update(layer, original):
    """layer.update as transformers' own, returning the caches as [batch, position, head, dim]."""
    def update(key_states, value_states, *args, **kwargs):
        layer.start_pos = _start_pos(layer, key_states.shape[2])
        keys, values = original(key_states, value_states, *args, **kwargs)
        return keys.transpose(1, 2), values.transpose(1, 2)
    return update


def custom_sdpa(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """transformers' attention interface over llama::custom_sdpa: query [batch, head, seq, dim], key
    and value the caches as [batch, position, head, dim]; returns ([batch, seq, head, dim], None)."""
    refused = sorted(name for name in _UNSUPPORTED if kwargs.get(name) is not None)
    if refused:
        raise UserError(f"torch_export {module.llm_ops_label}: llm_ops = sdpa: {type(module).__name__} passes "
                        f"{', '.join(refused)}, which ExecuTorch's custom_sdpa does not take; {_FIX}")
    output = torch.ops.llama.custom_sdpa(query.transpose(1, 2), key, value, module.kv_layer.start_pos,
                                         None, 0.0, True, scaling)
    return output, None


def _llama_attention_forward(attention):
    """transformers' LlamaAttention.forward over update_cache and custom_sdpa that keeps query, key
    and value in their layout [batch, seq, head, dim] (rope broadcast over the heads' axis): without
    the transposes to [batch, head, seq, dim] and back, which cost copies at every decode step."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    def forward(hidden_states, position_embeddings, attention_mask=None, past_key_values=None, **kwargs):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, attention.head_dim)
        query = attention.q_proj(hidden_states).view(hidden_shape)
        key = attention.k_proj(hidden_states).view(hidden_shape)
        value = attention.v_proj(hidden_states).view(hidden_shape)
        cos, sin = position_embeddings
        query, key = apply_rotary_pos_emb(query, key, cos, sin, unsqueeze_dim=2)
        layer = attention.kv_layer
        start = _start_pos(layer, key.shape[1])
        torch.ops.llama.update_cache(key, layer.keys, start)
        torch.ops.llama.update_cache(value, layer.values, start)
        output = torch.ops.llama.custom_sdpa(query, layer.keys, layer.values, start, None, 0.0, True,
                                             attention.scaling)
        return attention.o_proj(output.reshape(*input_shape, -1)), None
    return forward


def _delegable_norms(model):
    """Gives each LlamaRMSNorm (by its forward) a mean of squares as a linear over a constant row of
    1 / width: XNNPACK takes a mean of 4-D tensors only, so the mean of transformers' norm stays a
    portable operator that splits the delegate twice a layer (a delegate call more each)."""
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    for norm in (m for m in model.modules() if type(m).forward is LlamaRMSNorm.forward):
        width = norm.weight.shape[-1]
        norm.register_buffer("average", torch.full((1, width), 1.0 / width))

        def forward(hidden_states, norm=norm):  # LlamaRMSNorm.forward with the mean as a linear
            input_dtype, hidden_states = hidden_states.dtype, hidden_states.to(torch.float32)
            variance = torch.nn.functional.linear(hidden_states.pow(2), norm.average)
            hidden_states = hidden_states * torch.rsqrt(variance + norm.variance_epsilon)
            return norm.weight * hidden_states.to(input_dtype)
        object.__setattr__(norm, "forward", forward)


def _keep_layout(attention_modules):
    """Gives each LlamaAttention (by its forward, not a subclass that changes it) the forward that
    keeps ExecuTorch's layout; other attentions keep theirs, transposing around the operators."""
    from transformers.models.llama.modeling_llama import LlamaAttention

    for attention in attention_modules:
        if type(attention).forward is LlamaAttention.forward:
            object.__setattr__(attention, "forward", _llama_attention_forward(attention))


def _register_attention():
    """custom_sdpa under ATTENTION, with no mask to build (custom_sdpa is causal from start_pos)."""
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (defines torch.ops.llama)
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    AttentionInterface.register(ATTENTION, custom_sdpa)
    AttentionMaskInterface.register(ATTENTION, lambda *args, **kwargs: None)


def _static_layers(module, ops, label):
    """The exportable wrapper and its cache's layers, or a one-line error for another model."""
    from transformers.cache_utils import StaticLayer

    exportable = getattr(module, "exportable", None)
    cache = getattr(exportable, "static_cache", None)
    if cache is None:
        raise UserError(f"torch_export {label}: llm_ops = {list(ops)} needs an hf_model with task = "
                        f"\"text-generation\" (a transformers language model over its static cache); this model "
                        f"is {type(module).__name__}; {_FIX}")
    kinds = sorted({type(layer).__name__ for layer in cache.layers if type(layer) is not StaticLayer})
    if kinds:
        raise UserError(f"torch_export {label}: llm_ops = {list(ops)}: the model's cache has {', '.join(kinds)} "
                        f"layers, and ExecuTorch's custom_sdpa reads a plain static cache only; {_FIX}")
    return exportable, cache.layers


def _use_in_place_cache(exportable, layers):
    """Gives each layer caches of [batch, position, head, dim] (registered as the wrapper's buffers
    under their names) and the update that writes them with update_cache."""
    for index, layer in enumerate(layers):
        for kind, name in (("keys", "key_cache_"), ("values", "value_cache_")):
            flipped = torch.zeros_like(getattr(layer, kind).transpose(1, 2)).contiguous()
            setattr(layer, kind, flipped)
            exportable.register_buffer(f"{name}{index}", flipped, persistent=False)
        layer.update = _in_place_update(layer)


def _last_logits_only(causal_lm):
    """Makes the causal LM return the last position's logits only, [1, 1, vocab], as export_llm's
    Llama does: the runner reads the next token from the last row, and the LM head (the largest
    matrix of a model with a big vocabulary) then runs once per prompt instead of once per token.
    A model without transformers' logits_to_keep keeps every position's."""
    if "logits_to_keep" in inspect.signature(causal_lm.forward).parameters:  # a hook keeps the modules' names
        causal_lm.register_forward_pre_hook(lambda _, args, kwargs: (args, {**kwargs, "logits_to_keep": 1}),
                                            with_kwargs=True)


def apply(module, ops, label):
    """Swaps module's attention (and with "kv_cache", its cache) for ExecuTorch's LLM operators in
    place; the manifest's "llm_ops" record."""
    exportable, layers = _static_layers(module, ops, label)
    _register_attention()
    if "kv_cache" in ops:
        _use_in_place_cache(exportable, layers)
    else:
        for layer in layers:
            layer.update = _transposed_update(layer, layer.update)
    attention = [m for m in exportable.model.modules() if hasattr(m, "layer_idx") and hasattr(m, "scaling")]
    for child in attention:  # plain attributes, not a submodule: the attention reads start_pos from it
        object.__setattr__(child, "kv_layer", layers[child.layer_idx])
        object.__setattr__(child, "llm_ops_label", label)  # for custom_sdpa's one-line refusal
    if "kv_cache" in ops:
        _keep_layout(attention)
        _delegable_norms(exportable.model)
    config = exportable.model.config  # and its text model's, when it has one of its own
    config._attn_implementation = config.get_text_config()._attn_implementation = ATTENTION
    _last_logits_only(exportable.model)
    return {"ops": list(ops), "attention_layers": len(attention), "cache_layers": len(layers)}
