"""Every bad hf_model fails analysis with one message that names it and the fix: a table of bad
targets, each declared with its test in one call (failures only the export sees are in
//tests/huggingface:hf_errors_test)."""

load("//rules:defs.bzl", "hf_model")
load("//tests/starlark:bad_target_test.bzl", "bad_target_test_suite")

_BERT = {"hidden_size": 32, "model_type": "bert"}

# name: the bad target (its test is <name>_test); attrs: its hf_model arguments; needles:
# fragments its failure message must hold besides its label.
BAD_HF_MODELS = [
    struct(
        name = "unknown_task",
        attrs = dict(config = _BERT, task = "fill-masks"),
        needles = ["task \"fill-masks\" is not one of feature-extraction, fill-mask, text-classification", "fix `task`"],
    ),
    struct(
        name = "config_without_model_type",
        attrs = dict(config = {"hidden_size": 32}, task = "fill-mask"),
        needles = ["config must be the transformers config as a dict with its model_type"],
    ),
    struct(
        name = "folder_without_config_json",
        attrs = dict(checkpoint_dir = ["weights_only/model.safetensors"], config = _BERT, task = "fill-mask"),
        needles = ["checkpoint_dir has no config.json; list the files of a folder saved with save_pretrained"],
    ),
    struct(
        name = "image_size_not_an_int",
        attrs = dict(config = {"image_size": "large", "model_type": "vit"}, task = "image-classification"),
        needles = ["config's image_size (large) and num_channels (3) must be ints"],
    ),
]

def bad_hf_model_test_suite(name):
    bad_target_test_suite(name = name, rule = hf_model, table = BAD_HF_MODELS)
