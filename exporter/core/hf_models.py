"""Hugging Face transformers models by task: the model an hf_model target names, built from a
config (weights seeded) or a checkpoint folder, with no Python from the user.

hf_model (rules/private/hf_model.bzl) declares a torch_model whose entry is build() below, with
the task and the config as init_args, and a shape spec derived from the config. Each task is
transformers' own Auto class (AutoModelForMaskedLM, ...), so the model is the class a team
fine-tunes and ships; its ModelOutput is made plain at export (core/output_tree.py). The
generative tasks add only what ExecuTorch's runners need on top of transformers' exportable
modules (core/hf_generation.py).
"""

import json
import os

import torch

from exporter.core.errors import UserError

# task -> (the Auto classes that build it, in the order tried; the kind of inputs the rules
# derive its shape spec from: rules/private/hf_model.bzl). exporter_facts.bzl carries the
# kinds as HF_TASKS.
TASKS = {
    "feature-extraction": (("AutoModel",), "text"),
    "fill-mask": (("AutoModelForMaskedLM",), "text"),
    "text-classification": (("AutoModelForSequenceClassification",), "text"),
    "token-classification": (("AutoModelForTokenClassification",), "text"),
    "image-classification": (("AutoModelForImageClassification",), "image"),
    "object-detection": (("AutoModelForObjectDetection",), "image"),
    "automatic-speech-recognition": (("AutoModelForCTC", "AutoModelForSpeechSeq2Seq"), "audio"),
    "text2text-generation": (("AutoModelForSeq2SeqLM",), "seq2seq"),
    "text-generation": (("AutoModelForCausalLM",), "decoder"),
}

# Keys that differ between a config.json and the same config written in a BUILD file without
# changing the model.
_BOOKKEEPING = ("transformers_version", "_name_or_path", "architectures", "dtype", "torch_dtype")


def auto_class(task, model_type):
    """The Auto class that builds model_type for task; UserError listing the model types the
    task's classes take when none does."""
    import transformers
    from transformers.models.auto import modeling_auto

    names = TASKS[task][0]
    taken = []
    for name in names:
        cls = getattr(transformers, name)
        mapping = modeling_auto.__dict__[_MAPPING_NAMES[name]]
        if model_type in mapping:
            return cls
        taken += [t for t in mapping if t not in taken]
    raise UserError(
        f"task {task!r} takes no {model_type!r} model ({' or '.join(names)}); it takes: "
        f"{', '.join(sorted(taken))}; change `task`, or the config's model_type"
    )


# Auto class -> the name of its model_type mapping in transformers.models.auto.modeling_auto.
_MAPPING_NAMES = {
    "AutoModel": "MODEL_MAPPING_NAMES",
    "AutoModelForMaskedLM": "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
    "AutoModelForSequenceClassification": "MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES",
    "AutoModelForTokenClassification": "MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING_NAMES",
    "AutoModelForImageClassification": "MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES",
    "AutoModelForObjectDetection": "MODEL_FOR_OBJECT_DETECTION_MAPPING_NAMES",
    "AutoModelForCTC": "MODEL_FOR_CTC_MAPPING_NAMES",
    "AutoModelForSpeechSeq2Seq": "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES",
    "AutoModelForSeq2SeqLM": "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
    "AutoModelForCausalLM": "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
}


def _config_object(config):
    """A transformers config from the BUILD file's dict (its model_type picks the class)."""
    from transformers import AutoConfig

    values = {k: v for k, v in config.items() if k not in ("model_type", "transformers_version", "_name_or_path")}
    try:
        return AutoConfig.for_model(config["model_type"], **values)
    except (TypeError, ValueError, KeyError) as e:
        raise UserError(f"its config does not make a {config['model_type']!r} config: "
                        f"{str(e).splitlines()[0]}; fix `config`") from None


def _check_folder_config(checkpoint_dir, config):
    """The folder's config.json must be the config the rules derived the shape spec from."""
    path = os.path.join(checkpoint_dir, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            found = json.load(f)
    except (OSError, ValueError) as e:
        raise UserError(f"cannot read {path}: {e}; the checkpoint folder needs its config.json") from None
    if not isinstance(found, dict) or "model_type" not in found:
        raise UserError(f"{path} has no model_type; save the folder with transformers' save_pretrained")
    differing = sorted(k for k in set(found) | set(config)
                       if k not in _BOOKKEEPING and found.get(k) != config.get(k))
    if differing:
        raise UserError(f"`config` differs from {path} at {', '.join(differing[:8])}; pass the folder's "
                        f"own config (hf_configs in WORKSPACE reads it: docs/huggingface.md)")
    return found


def _from_folder(cls, checkpoint_dir):
    try:
        return cls.from_pretrained(checkpoint_dir, local_files_only=True, dtype=torch.float32)
    except (RuntimeError, ValueError, OSError) as e:
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        detail = next((line for line in lines if "size mismatch" in line), lines[0] if lines else type(e).__name__)
        raise UserError(f"the weights in {checkpoint_dir} do not fit its config.json: {detail}; "
                        f"save the folder again with save_pretrained") from None


def pretrained(task, config, checkpoint_dir=None):
    """transformers' model for task, from checkpoint_dir's weights or seeded (the caller seeds)."""
    if not isinstance(config, dict) or not isinstance(config.get("model_type"), str):
        raise UserError("its config has no model_type; give the transformers config as a dict with model_type")
    cls = auto_class(task, config["model_type"])
    if checkpoint_dir:
        _check_folder_config(checkpoint_dir, config)
        model = _from_folder(cls, checkpoint_dir)
    else:
        model = _from_config(cls, config)
    return model.eval()


def _from_config(cls, config):
    """cls's model of config, with seeded weights (the caller seeds)."""
    made = _config_object(config)
    try:
        return cls.from_config(made)
    except (ValueError, TypeError, AttributeError, IndexError) as e:
        raise UserError(f"{cls.__name__} cannot build a model of its config: "
                        f"{(str(e).splitlines() or [type(e).__name__])[0]}; fix `config`") from None


def static_cache(init_args):
    """What of an hf_model's module keeps a static KV cache (which exports only strictly: non-strict
    export captures the cache as constants, and the lowering then fails with "expected
    compiled_fn to be GraphModule"), or None."""
    if init_args.get("task") == "text-generation":
        return "its text-generation model"
    if init_args.get("component") == "decoder":
        return "its decoder"
    return None


def build(task, config, checkpoint_dir=None, **options):
    """hf_model's entry: the nn.Module a torch_export traces for task (options: the generative
    tasks' component and cache length, core/hf_generation.py)."""
    if task not in TASKS:
        raise UserError(f"task {task!r} is not one of {', '.join(TASKS)}; fix `task`")
    model = pretrained(task, config, checkpoint_dir)
    if TASKS[task][1] in ("seq2seq", "decoder") or options:
        from exporter.core import hf_generation

        return hf_generation.component(task, model, checkpoint_dir=checkpoint_dir, **options)
    return model
