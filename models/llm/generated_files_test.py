"""The zoo's generated files are what their scripts make, so the scripts are their source:
tokenizer.json (train_tokenizer.py over tokenizer_corpus.txt), the checkpoint folder
hf_checkpoint/ (make_hf_checkpoint.py) and the LoRA adapters lora/ (make_lora_adapters.py).
The scripts are deterministic."""

import os

from runfiles import Runfiles

from models.llm import make_hf_checkpoint, make_lora_adapters, train_tokenizer

RUNFILES = Runfiles.Create()


def _path(name):
    return RUNFILES.Rlocation(f"rules_torch_export/models/llm/{name}")


def test_training_again_gives_the_checked_in_tokenizer(tmp_path):
    out = tmp_path / "tokenizer.json"
    train_tokenizer.train(_path("tokenizer_corpus.txt"), str(out))
    with open(_path("tokenizer.json"), "rb") as f:
        assert out.read_bytes() == f.read(), "run models/llm/train_tokenizer.py and check in its output"


def test_writing_again_gives_the_checked_in_checkpoint_folder(tmp_path):
    make_hf_checkpoint.write(str(tmp_path))
    names = sorted(os.listdir(tmp_path))
    assert names == ["config.json", "generation_config.json", "model.safetensors"]
    for name in names:
        with open(_path(f"hf_checkpoint/{name}"), "rb") as f:
            assert (tmp_path / name).read_bytes() == f.read(), f"run models/llm/make_hf_checkpoint.py: {name}"


def test_writing_again_gives_the_checked_in_lora_adapters(tmp_path):
    make_lora_adapters.write(str(tmp_path))
    names = sorted(os.path.relpath(os.path.join(d, f), tmp_path) for d, _, files in os.walk(tmp_path) for f in files)
    assert names == ["coder/adapter_config.json", "coder/adapter_model.safetensors", "poet.safetensors"]
    for name in names:
        with open(_path(f"lora/{name}"), "rb") as f:
            assert (tmp_path / name).read_bytes() == f.read(), f"run models/llm/make_lora_adapters.py: {name}"
