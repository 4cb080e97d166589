"""qwen3_folder/ is what make_qwen3_folder.py writes (its tokenizer.json is the zoo's)."""

import importlib.util
import os

from runfiles import Runfiles

RUNFILES = Runfiles.Create()
_SCRIPT = RUNFILES.Rlocation("rules_torch_export/tests/huggingface/make_qwen3_folder.py")
_SPEC = importlib.util.spec_from_file_location("make_qwen3_folder", _SCRIPT)
make_qwen3_folder = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(make_qwen3_folder)


def test_writing_again_gives_the_checked_in_folder(tmp_path):
    make_qwen3_folder.write(str(tmp_path))
    names = sorted(os.listdir(tmp_path))
    assert names == ["config.json", "generation_config.json", "model.safetensors"]
    for name in names:
        with open(RUNFILES.Rlocation(f"rules_torch_export/tests/huggingface/qwen3_folder/{name}"), "rb") as f:
            assert (tmp_path / name).read_bytes() == f.read(), f"run tests/huggingface/make_qwen3_folder.py: {name}"
    with open(RUNFILES.Rlocation("rules_torch_export/tests/huggingface/qwen3_folder/tokenizer.json"), "rb") as f:
        with open(RUNFILES.Rlocation("rules_torch_export/models/llm/tokenizer.json"), "rb") as zoo:
            assert f.read() == zoo.read()
