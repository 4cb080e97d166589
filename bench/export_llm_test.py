"""bench/export_llm.py without running anything: export_llm's recipe for each shape (the 1B one is
//models/llm:hf_llama_1b's) and the files it finds of each program."""

from bench import export_llm


def test_the_1b_recipe_has_hf_llama_1bs_shape():
    params, config = export_llm.recipe("1b", "/out")
    assert (params["dim"], params["n_layers"], params["n_heads"], params["n_kv_heads"], params["hidden_dim"],
            params["vocab_size"]) == (2048, 16, 32, 8, 8192, 128256)
    assert params["use_scaled_rope"] and params["rope_theta"] == 500000.0  # its config's llama3 rope scaling
    assert (config["export"]["max_seq_length"], config["export"]["max_context_length"]) == (64, 64)
    assert config["quantization"] == {"qmode": "8da4w", "group_size": 32, "embedding_quantize": "4,32"}


def test_the_tiny_recipe_has_hf_llamas_shape():
    params, config = export_llm.recipe("hf_llama", "/out")
    assert (params["dim"], params["n_layers"], params["n_kv_heads"], params["vocab_size"]) == (128, 2, 2, 96)
    assert config["export"]["max_seq_length"] == 32 and config["base"]["params"] == "/out/params.json"


def test_a_programs_ptd_goes_with_its_pte():
    files = ["models/llm/hf_llama_1b_llm.pte", "models/llm/hf_llama_1b_llm.pte.json",
             "models/llm/hf_llama_1b_llm.ptd", "bench/hf_llama_4bit_emb.pte", "bench/hf_llama_4bit_emb.pte-0.params"]
    assert export_llm.program_files(files) == {
        "//models/llm:hf_llama_1b_llm": ("models/llm/hf_llama_1b_llm.pte", "models/llm/hf_llama_1b_llm.ptd"),
        "//bench:hf_llama_4bit_emb": ("bench/hf_llama_4bit_emb.pte", None),
    }


def _figures(ours_decode, ours_bytes):
    from bench import llm_instructions

    row = dict.fromkeys((llm_instructions.PREFILL, *llm_instructions.DECODES), 100)
    return {"ours": dict(row, **dict.fromkeys(llm_instructions.DECODES, ours_decode), bytes=ours_bytes),
            "export_llm": dict(row, bytes=1000)}


def test_the_instruction_gate_names_each_figure_above_export_llms():
    from bench import llm_instructions

    assert llm_instructions.failures(_figures(100, 1000), [("ours", "export_llm")]) == []
    assert llm_instructions.failures(_figures(101, 1001), [("ours", "export_llm")]) == [
        "ours: decode at 1 101 > export_llm's 100", "ours: decode at 24 101 > export_llm's 100",
        "ours: bytes 1,001 > export_llm's 1,000"]


def test_the_instruction_table_gives_each_program_against_export_llms():
    from bench import llm_instructions

    lines = llm_instructions.table(_figures(50, 900))
    assert lines[2].startswith("| `ours` | 100 | 50 | 50 | 900 |")
    assert lines[-1] == "| ours / export_llm | 1.000 | 0.500 | 0.500 | 0.900 |"
