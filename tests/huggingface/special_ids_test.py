"""Where an llm_program's bos and eos come from (exporter/core/special_tokens.py): the model's
generation config (generation_config.json, then config.json), then the tokenizer's special tokens
(tokenizer_config.json, resolved in tokenizer.json), then what ExecuTorch's tokenizer library
picks from tokenizer.json alone; a tokenizer target's own bos_id and eos_ids override them all.
A model whose ids do not fit its tokenizer fails in one line. On qwen3_folder/, whose
tokenizer.json alone makes the library pick <s> (0) for the end, and on the program built from it."""

import json
import os
import shutil

import pytest
from runfiles import Runfiles

from exporter.actions import registry, tokenizer
from exporter.core import special_tokens
from exporter.core.errors import UserError

RUNFILES = Runfiles.Create()


def _here(name):
    return RUNFILES.Rlocation(f"rules_torch_export/tests/huggingface/{name}")


def _tokenizer_manifest(tmp_path, **fields):
    identity = tmp_path / "identity.txt"
    identity.write_text("python 3.11.7\nexecutorch==1.5.1\n")
    tokenizer.run(registry.TokenizerConfig.from_json(dict({
        "label": "//pkg:qwen_tokenizer", "identity": str(identity), "src": _here("qwen3_folder/tokenizer.json"),
        "format": "huggingface", "outputs": {"manifest": str(tmp_path / "tok.json")}}, **fields)))
    return json.loads((tmp_path / "tok.json").read_text())


def test_the_tokenizer_takes_its_ids_from_its_tokenizer_config(tmp_path):
    written = _tokenizer_manifest(tmp_path, tokenizer_config=_here("qwen3_folder/tokenizer_config.json"))
    assert (written["bos_id"], written["eos_ids"]) == (0, [1])
    assert written["sources"] == {"bos_id": "tokenizer_config.json", "eos_ids": "tokenizer_config.json"}
    assert written["tokenizer_config"]["name"] == "tokenizer_config.json"


def test_without_its_tokenizer_config_the_library_picks_s_for_both(tmp_path):
    """What the runner's library reads from tokenizer.json alone: no token is named like bos or
    eos, so it falls back to id 0, <s>; a text would never end at </s>."""
    written = _tokenizer_manifest(tmp_path)
    assert (written["bos_id"], written["eos_ids"], written["sources"]) == (
        0, [0], {"bos_id": "tokenizer.json", "eos_ids": "tokenizer.json"})


def test_the_targets_own_ids_override_its_tokenizer_config(tmp_path):
    written = _tokenizer_manifest(tmp_path, tokenizer_config=_here("qwen3_folder/tokenizer_config.json"), eos_ids=[1, 0])
    assert (written["eos_ids"], written["sources"]["eos_ids"]) == ([1, 0], "eos_ids")


def test_a_tokenizer_config_naming_a_token_the_file_lacks_fails(tmp_path):
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"bos_token": "<s>", "eos_token": {"content": "<|end|>"}}))
    with pytest.raises(UserError) as e:
        _tokenizer_manifest(tmp_path, tokenizer_config=str(config))
    assert str(e.value) == ("tokenizer //pkg:qwen_tokenizer: tokenizer_config.json names eos_token '<|end|>', which "
                            "is not a token of tokenizer.json; give the tokenizer_config.json saved with this "
                            "tokenizer, or set eos_ids on the tokenizer")
    assert not (tmp_path / "tok.json").exists()


# A tokenizer manifest as the tokenizer action writes it, and an hf_model's generation record as
# the export writes it (core/hf_generation.py).
TOKENIZER = {"label": "//pkg:qwen_tokenizer", "file": {"name": "tokenizer.json"}, "vocab_size": 97, "bos_id": 0,
             "eos_ids": [1], "sources": {"bos_id": "tokenizer_config.json", "eos_ids": "tokenizer_config.json"}}
GUESSED = dict(TOKENIZER, eos_ids=[0], sources={"bos_id": "tokenizer.json", "eos_ids": "tokenizer.json"})
MODEL = {"label": "//pkg:qwen", "from": "generation_config.json", "bos_token_id": 0, "eos_token_id": [1]}


def test_the_program_takes_the_models_ids_first():
    bos, eos, sources = special_tokens.program_ids("//pkg:qwen_llm", GUESSED, dict(MODEL, eos_token_id=[1, 0]))
    assert (bos, eos) == (0, [1, 0])
    assert sources == {"get_bos_id": "generation_config.json of hf_model //pkg:qwen",
                       "get_eos_ids": "generation_config.json of hf_model //pkg:qwen"}


def test_the_tokenizer_gives_what_the_model_does_not_name():
    bos, eos, sources = special_tokens.program_ids("//pkg:qwen_llm", TOKENIZER, dict(MODEL, bos_token_id=None))
    assert (bos, eos, sources["get_bos_id"]) == (0, [1], "tokenizer_config.json of tokenizer //pkg:qwen_tokenizer")
    assert special_tokens.program_ids("//pkg:lm", TOKENIZER, None)[2]["get_eos_ids"] == (
        "tokenizer_config.json of tokenizer //pkg:qwen_tokenizer")


def test_the_tokenizers_own_attributes_override_the_model():
    given = dict(TOKENIZER, eos_ids=[5], sources={"bos_id": "tokenizer_config.json", "eos_ids": "eos_ids"})
    assert special_tokens.program_ids("//pkg:qwen_llm", given, MODEL)[1:] == (
        [5], {"get_bos_id": "generation_config.json of hf_model //pkg:qwen",
              "get_eos_ids": "eos_ids of tokenizer //pkg:qwen_tokenizer"})


def test_an_end_id_that_is_not_the_tokenizers_end_token_fails():
    with pytest.raises(UserError) as e:
        special_tokens.program_ids("//pkg:qwen_llm", TOKENIZER, dict(MODEL, eos_token_id=[0]))
    assert str(e.value) == (
        "llm_program //pkg:qwen_llm: generation_config.json of hf_model //pkg:qwen says eos_token_id [0], but "
        "tokenizer //pkg:qwen_tokenizer's end token in tokenizer.json is 1 (its tokenizer_config.json's eos_token); "
        "fix eos_token_id in generation_config.json, or set eos_ids on tokenizer //pkg:qwen_tokenizer")


def test_against_the_librarys_pick_the_message_says_to_give_the_tokenizer_config():
    with pytest.raises(UserError) as e:
        special_tokens.program_ids("//pkg:qwen_llm", GUESSED, dict(MODEL, **{"from": "config.json"}))
    assert "says eos_token_id [1], but tokenizer //pkg:qwen_tokenizer's end token in tokenizer.json is 0 (as " in str(e.value)
    assert "give the tokenizer its tokenizer_config.json, which names its eos_token); fix eos_token_id in config.json" in str(e.value)


@pytest.mark.parametrize("key", ["bos_token_id", "eos_token_id"])
def test_an_id_outside_the_tokenizers_vocabulary_fails(key):
    with pytest.raises(UserError) as e:
        special_tokens.program_ids("//pkg:qwen_llm", TOKENIZER, dict(MODEL, **{key: 120}))
    shown = 120 if key == "bos_token_id" else [120]
    attribute = "bos_id" if key == "bos_token_id" else "eos_ids"
    assert str(e.value) == (
        f"llm_program //pkg:qwen_llm: generation_config.json of hf_model //pkg:qwen says {key} {shown}, but 120 is "
        f"outside the vocabulary of tokenizer //pkg:qwen_tokenizer (tokenizer.json: ids 0 to 96); fix {key} in "
        f"generation_config.json, or set {attribute} on tokenizer //pkg:qwen_tokenizer")


def test_a_config_dict_gives_the_ids_transformers_uses_with_its_class_defaults():
    """An hf_model from a config dict: its generation config is the dict's, and transformers fills
    what the dict leaves out from the config class (Llama's bos 1 and eos 2)."""
    from exporter.core import hf_models

    config = {"model_type": "llama", "hidden_size": 16, "intermediate_size": 32, "num_attention_heads": 2,
              "num_hidden_layers": 1, "vocab_size": 50}
    assert hf_models.build("text-generation", config, max_cache_len=8).generation == {
        "bos_token_id": 1, "eos_token_id": [2], "from": "config"}
    assert hf_models.build("text-generation", dict(config, eos_token_id=[3, 4]), max_cache_len=8).generation == {
        "bos_token_id": 1, "eos_token_id": [3, 4], "from": "config"}


def test_a_folders_generation_config_comes_before_its_config_json(tmp_path):
    """transformers' order within a folder: generation_config.json (whose eos_token_id may be a
    list), else config.json; the record names the file."""
    from exporter.core import hf_models

    folder = os.path.dirname(_here("qwen3_folder/config.json"))
    for name in ("config.json", "generation_config.json", "model.safetensors"):
        shutil.copy(os.path.join(folder, name), tmp_path / name)
    config, saved = (json.loads((tmp_path / name).read_text()) for name in ("config.json", "generation_config.json"))
    (tmp_path / "generation_config.json").write_text(json.dumps(dict(saved, eos_token_id=[1, 5])))
    assert hf_models.build("text-generation", config, str(tmp_path), max_cache_len=8).generation == {
        "bos_token_id": 0, "eos_token_id": [1, 5], "from": "generation_config.json"}
    (tmp_path / "generation_config.json").unlink()
    assert hf_models.build("text-generation", config, str(tmp_path), max_cache_len=8).generation == {
        "bos_token_id": 0, "eos_token_id": [1], "from": "config.json"}

def _built(name):
    with open(_here(name), encoding="utf-8") as f:
        return json.load(f)


def test_the_program_built_from_the_folder_ends_at_its_end_token():
    """The issue's case: the program said get_eos_ids [0] (the library's pick), so the runner wrote
    </s> and went on."""
    program = _built("qwen3_folder_llm.pte.json")
    assert (program["constant_methods"]["get_bos_id"], program["constant_methods"]["get_eos_ids"]) == (0, [1])
    assert program["special_ids"] == {
        "get_bos_id": "generation_config.json of hf_model //tests/huggingface:qwen3_folder",
        "get_eos_ids": "generation_config.json of hf_model //tests/huggingface:qwen3_folder"}
    assert _built("qwen3_folder_llm_ep.pt2.json")["generation"] == {
        "bos_token_id": 0, "eos_token_id": [1], "from": "generation_config.json"}
    written = _built("qwen3_folder_tokenizer.tokenizer.json")
    assert (written["eos_ids"], written["sources"]["eos_ids"]) == ([1], "tokenizer_config.json")
