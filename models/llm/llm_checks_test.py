"""What an llm_program's build refuses, one line each naming the target and the fix: a tokenizer
the runner cannot load, an id outside its vocabulary, a vocabulary larger than the model's, and
a context longer than the model's cache. The checks run here on the real tokenizer and export.
Also: the zoo's 4-bit programs are at least 4x smaller than their float ones, their
manifests say which layers were quantized, and quantized tables run as ExecuTorch's embedding kernel."""

import dataclasses
import json
import os
import subprocess
import sys

import pytest
from runfiles import Runfiles

from exporter.actions import llm, registry, tokenizer
from exporter.core.errors import UserError
from exporter.formats import pt2

RUNFILES = Runfiles.Create()


def _path(name):
    return RUNFILES.Rlocation(f"rules_torch_export/models/llm/{name}")


def _tokenizer_config(tmp_path, src, **fields):
    identity = tmp_path / "identity.txt"  # the toolchain's identity file, as the manifest reads it
    identity.write_text("python 3.11.7\nexecutorch==1.5.1\n")
    return registry.TokenizerConfig.from_json(dict({
        "label": "//pkg:tok", "identity": str(identity), "src": src,
        "format": "huggingface", "outputs": {"manifest": str(tmp_path / "tok.json")}}, **fields))


def test_the_tokenizer_manifest_has_the_runners_ids(tmp_path):
    tokenizer.run(_tokenizer_config(tmp_path, _path("tokenizer.json")))
    written = json.loads((tmp_path / "tok.json").read_text())
    assert (written["vocab_size"], written["bos_id"], written["eos_ids"]) == (96, 0, [1])


def test_an_id_outside_the_vocabulary_names_the_attribute(tmp_path):
    with pytest.raises(UserError) as e:
        tokenizer.run(_tokenizer_config(tmp_path, _path("tokenizer.json"), eos_ids=[1, 96]))
    assert str(e.value) == ("tokenizer //pkg:tok: eos_ids has 96, outside the vocabulary of tokenizer.json "
                            "(ids 0 to 95); set eos_ids to the id of that token in the file")


def test_a_file_the_runner_cannot_load_says_so(tmp_path):
    with pytest.raises(UserError) as e:
        tokenizer.run(_tokenizer_config(tmp_path, _path("tokenizer_corpus.txt")))
    assert str(e.value).startswith("tokenizer //pkg:tok: ExecuTorch's runner cannot load tokenizer_corpus.txt as a "
                                   "huggingface tokenizer (")
    assert not (tmp_path / "tok.json").exists()


def _lower_config(tmp_path, vocab_size=96, max_context_len=32):
    manifest = tmp_path / "tok.json"
    manifest.write_text(json.dumps({"label": "//pkg:tok", "file": {"name": "tokenizer.json"}, "vocab_size": vocab_size,
                                    "bos_id": 0, "eos_ids": [1], "sources": {"bos_id": "tokenizer.json", "eos_ids": "tokenizer.json"}}))
    return registry.LowerConfig.from_json({
        "label": "//pkg:lm", "identity": "-", "exported_label": "//pkg:lm_ep", "pt2": "-",
        "llm": {"max_seq_len": 32, "max_context_len": max_context_len,
                "tokenizer": {"label": "//pkg:tok", "manifest": str(manifest)}}})


@pytest.fixture(scope="module")
def exported():
    return pt2.load(_path("tiny_lm_llm_ep.pt2"))


def test_the_constants_come_from_the_model_and_the_tokenizer(tmp_path, exported):
    constants = llm.constants(_lower_config(tmp_path), {"forward": exported})
    assert constants["get_vocab_size"] == 96 and constants["get_eos_ids"] == [1]


def test_a_program_of_static_shapes_tells_the_runner_to_feed_one_token_per_call(tmp_path, exported):
    """llm_program's lowering for a static-shape backend (OpenVINO) gets static_shape True, and
    the zoo's OpenVINO llm_program was exported for one token: the runner then prefills token by token."""
    static = llm.constants(dataclasses.replace(_lower_config(tmp_path), llm=dataclasses.replace(
        _lower_config(tmp_path).llm, static_shape=True)), {"forward": exported})
    assert (static["enable_dynamic_shape"], static["use_kv_cache"]) == (False, True)
    assert llm.constants(_lower_config(tmp_path), {"forward": exported})["enable_dynamic_shape"] is True
    with open(_path("tiny_lm_openvino_llm.pte.json"), encoding="utf-8") as f:
        zoo = json.load(f)["constant_methods"]
    assert zoo["enable_dynamic_shape"] is False
    assert json.loads(zoo["input_schema"])["forward"]["inputs"][0]["shape"] == [1, 1]


def test_a_tokenizer_larger_than_the_model_fails(tmp_path, exported):
    with pytest.raises(UserError) as e:
        llm.constants(_lower_config(tmp_path, vocab_size=200), {"forward": exported})
    assert str(e.value).startswith("llm_program //pkg:lm: tokenizer //pkg:tok has 200 tokens but the model's logits "
                                   "have 96; use the tokenizer the model was trained with")


def test_a_context_beyond_the_cache_fails(tmp_path, exported):
    with pytest.raises(UserError) as e:
        llm.check_context(_lower_config(tmp_path, max_context_len=64), exported)
    assert str(e.value).startswith("llm_program //pkg:lm: the model cannot take a token at position 63 "
                                   "(max_context_len - 1): ")
    assert str(e.value).endswith("; set max_seq_len (and max_context_len) to at most the model's cache length")


@pytest.mark.parametrize("program", ["tiny_lm_llm", "hf_llama_llm"])
def test_the_4bit_program_is_at_least_4x_smaller_than_float(program):
    float_bytes = os.path.getsize(_path(f"{program}.pte"))
    four_bit = os.path.getsize(_path(f"{program}_4bit.pte"))
    print(f"{program}: {float_bytes} B float, {four_bit} B 8da4w: {float_bytes / four_bit:.2f}x")
    assert float_bytes >= 4 * four_bit


def test_the_manifest_names_the_quantized_layers():
    with open(_path("tiny_lm_llm_4bit_ep.pt2.json"), encoding="utf-8") as f:
        record = json.load(f)["eager_quantization"]
    # Every linear layer: 4 per block in 2 blocks, and the head; none left float.
    assert record == {"scheme": "8da4w", "group_size": 32, "layers": 9, "float_layers": {}}


def test_quantized_tables_run_as_executorchs_embedding_kernel_and_shrink_the_program():
    with open(_path("tiny_lm_llm_4bit_emb_ep.pt2.json"), encoding="utf-8") as f:
        record = json.load(f)["embedding_quantization"]
    assert record == {"scheme": "4,32", "bits": 4, "group_size": 32, "tables": ["lm.embed", "lm.position"]}
    with open(_path("tiny_lm_llm_4bit_emb.pte.json"), encoding="utf-8") as f:
        operators = json.load(f)["methods"]["forward"]["operators"]
    assert operators["quantized_decomposed::embedding_4bit.dtype_out"] == 2
    assert not any("embedding" in op for op in operators if op.startswith("aten::"))
    tables, floats = os.path.getsize(_path("tiny_lm_llm_4bit_emb.pte")), os.path.getsize(_path("tiny_lm_llm_4bit.pte"))
    print(f"tiny_lm_llm_4bit: {floats} B with float tables, {tables} B with 4-bit tables")
    assert tables < 0.9 * floats


def test_a_fresh_process_loads_the_export_of_quantized_tables():
    # The lowering's own process, sandboxed (--config=noworker): nothing has imported ExecuTorch's
    # exir, which defines the tables' operators, before the .pt2 loads.
    script = "import sys; from exporter.formats import pt2; pt2.load(sys.argv[1])"
    done = subprocess.run([sys.executable, "-c", script, _path("tiny_lm_llm_4bit_emb_ep.pt2")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


def _generation_config(prompts, init_args):
    from exporter.checks import contract

    return contract.GenerationTestConfig.from_json({
        "label": "//pkg:gen_test", "program": "//models/llm:tiny_lm_llm", "pte": _path("tiny_lm_llm.pte"),
        "manifest": _path("tiny_lm_llm.pte.json"), "prompts": prompts, "max_new_tokens": 6,
        "tokenizer": {"label": "//models/llm:tiny_tokenizer", "file": _path("tokenizer.json"),
                      "manifest": _path("tiny_tokenizer.tokenizer.json"), "format": "huggingface"},
        "model": {"label": "//models/llm:tiny_lm_runner", "entry": "models.llm.runner_lm:tiny_lm_for_runner",
                  "init_args": init_args},
        "native_runner": RUNFILES.Rlocation("rules_torch_export/native/et_runner"),
        "native_runner_label": "//native:et_runner"})


def test_a_program_that_generates_otherwise_than_its_model_fails():
    """tiny_lm_llm is the 128-wide model; against the 64-wide one both runners differ."""
    from exporter.checks import generation

    ok, report = generation.run(_generation_config(["A small model"], {"dim": 64}))
    assert not ok, report
    assert "LLM runner: DIFFERENT: " in report and "native runner: DIFFERENT: " in report, report
    assert report.rstrip().endswith("then the numerics_test of the program.")


def test_a_prompt_longer_than_the_program_takes_fails_in_one_line():
    from exporter.checks import generation

    config = _generation_config(["x" * 100], {"dim": 128})
    with pytest.raises(ValueError) as e:
        generation.run(config)
    assert str(e.value).startswith("prompt 'xxxx")
    assert str(e.value).endswith("tokens; //models/llm:tiny_lm_llm takes 1 to 31 (max_seq_len - 1): shorten it in prompts")
