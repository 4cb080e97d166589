"""Writes tests/huggingface/eos_prompts.bzl: for each text-generation row of the architectures
table (decoders.bzl) and for qwen3_folder, the first prompt whose greedy text ends at the model's
end id within MAX_NEW_TOKENS tokens, after at least one other token. The candidates are the spans of one to three words of a corpus, in
order: the zoo tokenizer's for the rows, the folder tokenizer's sentences for the folder. Their
generation tests take it as eos_prompts, so that each shows that ExecuTorch's LLM runner stops
where transformers stops (a text cut at the limit cannot). The models are hf_model's, loaded as
the tests load them (seeded; the folder from its files). Deterministic; //tests/huggingface:
folder_test checks that eos_prompts.bzl is this script's output.

    python tests/huggingface/find_eos_prompts.py tests/huggingface/eos_prompts.bzl
"""

import json
import os
import re
import sys

MAX_NEW_TOKENS = 8  # the generation tests' max_new_tokens, which eos_prompts.bzl hands them
MAX_CONTEXT = 32  # their programs' max_seq_len and max_context_len
HERE = os.path.dirname(os.path.abspath(__file__))


def decoders(path):
    """decoders.bzl's DECODERS: it holds dict literals and dict() only, so Python reads it too."""
    found = {}
    with open(path, encoding="utf-8") as f:
        exec(compile(f.read(), path, "exec"), {"__builtins__": {"dict": dict}}, found)
    return found["DECODERS"]


def candidates(text):
    """Spans of one, two, then three words of `text`, in order, each once."""
    words = re.findall(r"[A-Za-z]+", text)
    spans = [" ".join(words[i:i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)]
    return list(dict.fromkeys(spans))


def _model(label, init_args, folder=None):
    from exporter.actions.registry import HF_MODEL_ENTRY, ModelConfig
    from exporter.core.model_loader import load_model

    files = tuple(os.path.join(folder, f) for f in sorted(os.listdir(folder))) if folder else ()
    config = ModelConfig(label=label, entry=HF_MODEL_ENTRY, init_args=init_args, checkpoint_dir=folder,
                         checkpoint_files=files)
    return load_model(config).causal_lm()


def first_ending(model, runner_tokenizer, prompts):
    """The first of `prompts` whose greedy text ends at an end id, after another token, within
    MAX_NEW_TOKENS tokens, every token one the tokenizer has. The model runs on the whole growing
    text at each step, as generate() without a cache (a call of generate() costs 20 times more);
    the generation tests then check the text's end with generate() itself."""
    import torch

    from exporter.checks import greedy
    from exporter.core.special_tokens import as_list

    ends = as_list(model.generation_config.eos_token_id)
    for prompt in prompts:
        ids = runner_tokenizer.encode(prompt, 0, 0)
        count = min(MAX_NEW_TOKENS, MAX_CONTEXT - len(ids))
        with torch.no_grad():
            out = greedy.tokens(lambda new: model(input_ids=torch.tensor([ids + new]), use_cache=False).logits, count, ends)
        if len(out) > 1 and greedy.ended(out, ends, count) and max(out) < runner_tokenizer.vocab_size():
            return prompt
    raise ValueError(f"no prompt's text ends within {MAX_NEW_TOKENS} tokens; add candidates")


def prompts(decoders_bzl, table_tokenizer, corpus, folder, sentences):
    """{model: its prompt}: the table's rows (decoders_bzl, with the zoo's tokenizer and corpus) and
    the folder (with its own tokenizer, and the sentences it was trained on)."""
    import torch

    from exporter.actions import tokenizer

    torch.set_num_threads(1)  # models this small gain nothing from a second thread, which waits on a busy machine
    found = {}
    zoo = tokenizer.load(table_tokenizer, "huggingface", "//models/llm:tiny_tokenizer")
    with open(corpus, encoding="utf-8") as f:
        table_prompts = candidates(f.read())
    for name, config in sorted(decoders(decoders_bzl).items()):
        init_args = {"task": "text-generation", "config": config, "max_cache_len": MAX_CONTEXT}
        found[name] = first_ending(_model(f"//tests/huggingface:{name}", init_args), zoo, table_prompts)
    own = tokenizer.load(os.path.join(folder, "tokenizer.json"), "huggingface", "//tests/huggingface:qwen3_folder_tokenizer")
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        init_args = {"task": "text-generation", "config": json.load(f), "max_cache_len": MAX_CONTEXT}
    found["qwen3_folder"] = first_ending(_model("//tests/huggingface:qwen3_folder", init_args, folder), own,
                                         candidates(" ".join(sentences)))
    return found


def text(found):
    """eos_prompts.bzl's text, as buildifier writes it."""
    rows = "".join(f'    "{name}": "{prompt}",\n' for name, prompt in sorted(found.items()))
    return (f'"""Prompts whose text ends at the model\'s end id within MAX_NEW_TOKENS tokens: the eos_prompts of the\n'
            f'generation tests here. Written by find_eos_prompts.py; do not edit."""\n\n'
            f"MAX_NEW_TOKENS = {MAX_NEW_TOKENS}\n\nEOS_PROMPTS = {{\n{rows}}}\n")


def main(out):
    sys.path[:0] = [HERE, os.path.dirname(os.path.dirname(HERE))]  # make_qwen3_folder, and the exporter
    import make_qwen3_folder

    root = os.path.dirname(os.path.dirname(HERE))
    found = prompts(os.path.join(HERE, "decoders.bzl"), os.path.join(root, "models/llm/tokenizer.json"),
                    os.path.join(root, "models/llm/tokenizer_corpus.txt"), os.path.join(HERE, "qwen3_folder"),
                    make_qwen3_folder.SENTENCES)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text(found))


if __name__ == "__main__":
    main(sys.argv[1])
