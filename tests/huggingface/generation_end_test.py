"""A generation test shows that a program stops where its model stops only with a text that ends
before max_new_tokens: each of llm_generation_test's eos_prompts and seq2seq_generation_test's
eos_cases must, and the test fails saying so when one runs to the limit. On qwen3_folder's
program in ExecuTorch's LLM runner (whose "exports" ends at </s> after 4 tokens) and Whisper's
(whose second case ends after 4 tokens), against transformers' generate()."""

import json
import os

from runfiles import Runfiles

from exporter.checks import contract, generation, seq2seq

RUNFILES = Runfiles.Create()
HERE = "rules_torch_export/tests/huggingface"


def _here(name):
    return RUNFILES.Rlocation(f"{HERE}/{name}")


def _folder_model():
    folder = os.path.dirname(_here("qwen3_folder/config.json"))
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    return {"label": "//tests/huggingface:qwen3_folder", "entry": "exporter.core.hf_models:build",
            "init_args": {"task": "text-generation", "config": config, "max_cache_len": 32},
            "checkpoint_dir": folder, "checkpoint_files": [os.path.join(folder, f) for f in sorted(os.listdir(folder))]}


def _llm_config(max_new_tokens):
    return contract.GenerationTestConfig.from_json({
        "label": "//pkg:gen_test", "program": "//tests/huggingface:qwen3_folder_llm",
        "pte": _here("qwen3_folder_llm.pte"), "manifest": _here("qwen3_folder_llm.pte.json"),
        "prompts": [], "eos_prompts": ["exports"], "max_new_tokens": max_new_tokens,
        "tokenizer": {"label": "//tests/huggingface:qwen3_folder_tokenizer", "file": _here("qwen3_folder/tokenizer.json"),
                      "manifest": _here("qwen3_folder_tokenizer.tokenizer.json"), "format": "huggingface"},
        "model": _folder_model(), "native_runner_label": "//native:et_runner"})


def test_an_eos_prompt_whose_text_ends_passes():
    ok, report = generation.run(_llm_config(8))
    assert ok, report
    assert "against transformers' generate() of //tests/huggingface:qwen3_folder (greedy, end ids [1])" in report
    assert "eager continues ' exer next</s>' (4 tokens, ended by end id 1)" in report, report
    assert "LLM runner: same tokens" in report


def test_an_eos_prompt_cut_at_the_limit_fails_saying_so():
    ok, report = generation.run(_llm_config(3))
    assert not ok, report
    assert "must end at an end id [1] within 3 tokens (eos_prompts), but eager runs to the limit" in report, report
    assert "LLM runner: same tokens" in report and "does not generate what the model" not in report


def _whisper_config(max_new_tokens):
    with open(_here("whisper_generation_test.config.json"), encoding="utf-8") as f:
        fields = json.load(f)
    return contract.Seq2SeqGenerationConfig.from_json(dict(
        fields, pte=_here("whisper_pte.pte"), max_new_tokens=max_new_tokens, eos_cases=[1]))


def test_an_eos_case_that_ends_passes():
    ok, report = seq2seq.run(_whisper_config(8))
    assert ok, report
    assert "input 1: eager [85, 48, 13, 2] (ended)" in report, report


def test_an_eos_case_cut_at_the_limit_fails_saying_so():
    ok, report = seq2seq.run(_whisper_config(3))
    assert not ok, report
    assert "input 1 must end at an end id [2] within 3 tokens (eos_cases), but eager runs to the limit" in report, report
    assert "program [85, 48, 13]" in report and "are not the eager model's" not in report
