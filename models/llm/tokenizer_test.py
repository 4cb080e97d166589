"""tokenizer.json is what train_tokenizer.py makes of tokenizer_corpus.txt: the zoo's tokenizer
is trained in this repository, and training is deterministic."""

from runfiles import Runfiles

from models.llm import train_tokenizer

RUNFILES = Runfiles.Create()


def test_training_again_gives_the_checked_in_file(tmp_path):
    corpus = RUNFILES.Rlocation("rules_torch_export/models/llm/tokenizer_corpus.txt")
    out = tmp_path / "tokenizer.json"
    train_tokenizer.train(corpus, str(out))
    with open(RUNFILES.Rlocation("rules_torch_export/models/llm/tokenizer.json"), "rb") as f:
        assert out.read_bytes() == f.read(), "run models/llm/train_tokenizer.py and check in its output"
