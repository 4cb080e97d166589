"""llm_program's default llm_ops: ExecuTorch's LLM operators where they are measured faster.

The macro knows the program (backends, release, foundation); torch_export's analysis knows the
model (an hf_model's task, config and adapter). Both must allow them (docs/llm.md, "ExecuTorch's
LLM operators")."""

load("//exporter:exporter_facts.bzl", "DEFAULT_RELEASE", "HF_MODEL_ENTRY", "LLM_OPS")
load("//rules/private:backends.bzl", "backend_name")

# The transformers model_types whose calls take fewer instructions with llm_ops, measured per
# tests/huggingface/decoders.bzl row (docs/llm.md, "ExecuTorch's LLM operators"); others
# (gemma3's sliding window is refused) and unmeasured ones keep transformers' attention.
FASTER_MODEL_TYPES = ["gpt2", "llama", "phi3", "qwen3", "smollm3"]

def program_takes_llm_ops(backends, release, kwargs):
    """Whether llm_program's own arguments let its default turn llm_ops on.

    Args:
      backends: the macro's backends (a list, or {method: list}).
      release: the macro's release (None for the default's).
      kwargs: the macro's other arguments (a foundation shares weights with LoRA adapters).

    Returns:
      True for XNNPACK only, in the default release, without a foundation.
    """
    listed = [b for method in backends.values() for b in method] if type(backends) == "dict" else backends
    xnnpack_only = bool(listed) and not [b for b in listed if backend_name(b) != "xnnpack"]
    return xnnpack_only and release in (None, DEFAULT_RELEASE) and not kwargs.get("foundation")

def is_hf_language_model(model):
    """Whether `model` (a TorchModelInfo) is an hf_model with task "text-generation".

    Those are the only models ExecuTorch's LLM operators apply to: a transformers language model
    over its static cache.

    Args:
      model: the TorchModelInfo.

    Returns:
      True or False.
    """
    return model.entry == HF_MODEL_ENTRY and model.init_args.get("task") == "text-generation"

def default_llm_ops(model):
    """The llm_ops a program that allows them gets for `model`.

    Args:
      model: the TorchModelInfo exported.

    Returns:
      LLM_OPS for an hf_model text-generation model, without a LoRA adapter, of a faster
      model_type; else [].
    """
    config = model.init_args.get("config") or {}
    if not is_hf_language_model(model) or model.lora:
        return []
    return list(LLM_OPS) if config.get("model_type") in FASTER_MODEL_TYPES else []
