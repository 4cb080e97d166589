"""hf_table: the worst difference over an architecture's tests, its status and size, a row per
architecture, the ones without results marked."""

from bench import hf_table


def _summary(test, largest):
    return {"test": f"//tests/huggingface:{test}", "largest_difference": largest}


def test_a_row_takes_the_worst_difference_over_tests_and_runtimes_but_not_across_cpus():
    found = [
        _summary("t5_encoder_numerics_test", {"python": {"min": 1e-7, "max": 3e-7}, "native": {"min": 2e-7}}),
        _summary("t5_decoder_numerics_test", {"python": {"step 0": 5e-6}, "arm64 vs native": {"step 0": 1.0}}),
    ]
    text = hf_table.table(found, {"t5": "passes"}, {"t5": 299_000}, {"t5": "text2text-generation", "bert": "fill-mask"})
    lines = text.splitlines()
    assert lines[0] == "| architecture | task | status | .pte | worst error vs eager |"
    assert lines[2] == "| bert | fill-mask | not run | - | - |"
    assert lines[3] == "| t5 | text2text-generation | passes | 299 KB | 5.0e-06 |"


def test_outputs_that_could_not_be_compared_say_so():
    found = [_summary("vit_numerics_test", {"python": {"min": None}})]
    assert hf_table.table(found, {"vit": "fails"}, {}, {"vit": "image-classification"}).endswith(
        "| vit | image-classification | fails | - | n/c |")


def test_every_row_of_the_table_file_has_its_task():
    """Wrapped rows (DETR's) and every decoder count, with their tasks."""
    tasks = hf_table._tasks(".")  # the runfiles' root: architectures.bzl is data
    assert tasks["detr"] == "object-detection"
    assert tasks["whisper"] == "automatic-speech-recognition"
    assert {name for name, task in tasks.items() if task == "text-generation"} == {
        "gpt2", "llama", "qwen3", "gemma3", "phi3", "smollm3"}
    assert len(tasks) == 19
