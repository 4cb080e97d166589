"""llm_generation_test on a program whose model emits an id its tokenizer does not have (a
padded vocabulary): the test fails in one line that names the id, the tokenizer's size and the
program, not with the tokenizer's DecodeFailure traceback."""

import subprocess
import sys

CONFIG = "tests/padded_vocab/padded_generation_test.config.json"


def test_an_id_outside_the_tokenizer_fails_in_one_line():
    code = "import sys; from exporter.checks import generation; sys.exit(generation.main(sys.argv[1:]))"
    result = subprocess.run([sys.executable, "-c", code, CONFIG], capture_output=True, text=True)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("//tests/padded_vocab:")]
    assert line == (
        "//tests/padded_vocab:padded_generation_test: //tests/padded_vocab:padded_lm_llm generates token id 100 "
        "(the model's, eager), which tokenizer //models/llm:tiny_tokenizer does not have: it has 96 tokens, "
        "ids 0 to 95; mask the model's logits past id 95 (a padded vocabulary), or use the tokenizer the "
        "model was trained with"), line
