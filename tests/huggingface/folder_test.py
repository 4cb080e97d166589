"""qwen3_folder/ is what make_qwen3_folder.py writes, and eos_prompts.bzl (the generation tests'
prompts whose text ends) what find_eos_prompts.py writes."""

import importlib.util
import os

from runfiles import Runfiles

RUNFILES = Runfiles.Create()


def _here(name):
    return RUNFILES.Rlocation(f"rules_torch_export/tests/huggingface/{name}")


def _script(name):
    spec = importlib.util.spec_from_file_location(name, _here(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_qwen3_folder, find_eos_prompts = _script("make_qwen3_folder"), _script("find_eos_prompts")


def test_writing_again_gives_the_checked_in_folder(tmp_path):
    make_qwen3_folder.write(str(tmp_path))
    names = sorted(os.listdir(tmp_path))
    assert names == ["config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
                     "tokenizer_config.json"]
    for name in names:
        with open(_here(f"qwen3_folder/{name}"), "rb") as f:
            assert (tmp_path / name).read_bytes() == f.read(), f"run tests/huggingface/make_qwen3_folder.py: {name}"


def test_searching_again_gives_the_checked_in_eos_prompts():
    found = find_eos_prompts.prompts(
        _here("decoders.bzl"), RUNFILES.Rlocation("rules_torch_export/models/llm/tokenizer.json"),
        RUNFILES.Rlocation("rules_torch_export/models/llm/tokenizer_corpus.txt"),
        os.path.dirname(_here("qwen3_folder/config.json")), make_qwen3_folder.SENTENCES)
    with open(_here("eos_prompts.bzl"), encoding="utf-8") as f:
        assert find_eos_prompts.text(found) == f.read(), "run tests/huggingface/find_eos_prompts.py"
