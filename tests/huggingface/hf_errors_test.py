"""hf_model's mistakes that only the export can see, each one line naming the target and what
to change: an architecture the task's Auto class does not take (with the ones it takes), a config
that makes no model, a folder whose config.json is not the config given, weights that do not fit
their config, and a static-cache model exported non-strict. In-process, as the export runs."""

import json
import os

import pytest
import torch

from exporter.actions import export, registry
from exporter.core.errors import UserError

BERT = {"model_type": "bert", "vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 1,
        "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64}
TEXT = [{"name": "input_ids", "value": {"tensor": {"shape": [1, 8], "dtype": "int64"}}}]


def _export(tmp_path, task, config, checkpoint_dir=None, strict=False, extra=None):
    """The export's message for an hf_model, or None when it exports."""
    identity = tmp_path / "identity.txt"
    identity.write_text("python 3\n")
    init_args = dict({"task": task, "config": config}, **(extra or {}))
    model = {"label": "//t:model", "entry": registry.HF_MODEL_ENTRY, "init_args": init_args, "import_roots": []}
    if checkpoint_dir:
        model["checkpoint_dir"] = str(checkpoint_dir)
    pt2 = str(tmp_path / "ep.pt2")
    try:
        export.run(registry.ExportConfig.from_json({
            "label": "//t:ep", "identity": str(identity), "spec_label": "//t:spec", "strict": strict,
            "spec": {"dims": {}, "inputs": TEXT}, "model": model,
            "outputs": {"pt2": pt2, "manifest": pt2 + ".json"}}))
    except UserError as e:
        return str(e)
    return None


def _folder(tmp_path, config, weights_config=None):
    """A save_pretrained folder of a BertForMaskedLM whose config.json is config (its weights of
    weights_config, when given)."""
    from transformers import AutoConfig, AutoModelForMaskedLM

    values = dict(weights_config or config)
    model = AutoModelForMaskedLM.from_config(AutoConfig.for_model(values.pop("model_type"), **values))
    folder = tmp_path / "folder"
    model.save_pretrained(folder)
    (folder / "config.json").write_text(json.dumps(dict(json.loads((folder / "config.json").read_text()), **config)))
    return folder


def _one_line(message, *needles):
    assert message is not None and "\n" not in message, message
    assert message.startswith("hf_model //t:model: "), message
    for needle in needles:
        assert needle in message, message


def test_a_model_the_task_does_not_take_lists_the_ones_it_does(tmp_path):
    _one_line(_export(tmp_path, "image-classification", BERT),
              "task 'image-classification' takes no 'bert' model (AutoModelForImageClassification)",
              "it takes: beit, bit,", "vit", "change `task`, or the config's model_type")


def test_a_config_that_makes_no_model_says_what_transformers_refused(tmp_path):
    _one_line(_export(tmp_path, "fill-mask", dict(BERT, hidden_size=30, num_attention_heads=4)),
              "cannot build a model of its config", "not a multiple of the number of attention heads", "fix `config`")


def _saved_config(folder):
    return json.loads((folder / "config.json").read_text())


def test_a_folder_whose_config_is_not_the_one_given(tmp_path):
    folder = _folder(tmp_path, BERT)
    _one_line(_export(tmp_path, "fill-mask", dict(_saved_config(folder), hidden_size=64), folder),
              "`config` differs from", "config.json at hidden_size;")


def test_weights_that_do_not_fit_their_config(tmp_path):
    folder = _folder(tmp_path, dict(BERT, intermediate_size=48), weights_config=BERT)
    _one_line(_export(tmp_path, "fill-mask", _saved_config(folder), folder),
              "do not fit its config.json", "save the folder again")


def test_a_static_cache_model_exported_non_strict(tmp_path):
    _one_line(_export(tmp_path, "text-generation", dict(BERT, model_type="llama"), extra={"max_cache_len": 16}),
              "its text-generation model keeps a static KV cache", "set strict = True",
              "(//t:ep)")


def test_the_same_folder_and_config_export(tmp_path):
    folder = _folder(tmp_path, BERT)
    torch.manual_seed(0)
    assert _export(tmp_path, "fill-mask", _saved_config(folder), folder) is None
    assert os.path.exists(tmp_path / "ep.pt2")


@pytest.mark.parametrize("task", ["fill-mask"])
def test_a_seeded_model_exports(tmp_path, task):
    assert _export(tmp_path, task, BERT) is None
