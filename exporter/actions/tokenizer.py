"""The TokenizerCheck action: loads a tokenizer file with the tokenizer library of ExecuTorch's
LLM runner (pytorch_tokenizers' C++ classes, the code the runner itself links) and writes its
manifest: format, digest, vocabulary size and the begin and end ids (the target's, else those its
tokenizer_config.json names, else the library's own reading of the file: core/special_tokens.py),
checked against the vocabulary, with where each came from. An executorch_program made by
llm_program reads the manifest for its constant methods (exporter/actions/llm.py), so a tokenizer
the runner could not load, or a wrong id, fails the build instead of the app.
"""

import os

from exporter.core import manifest, special_tokens
from exporter.core.errors import UserError

FORMAT = "rules_torch_export/tokenizer-manifest/1"

# format -> the pytorch_tokenizers C++ class the runner uses for it.
LOADERS = {
    "huggingface": "CppHFTokenizer",
    "sentencepiece": "CppSPTokenizer",
    "tiktoken": "CppTiktoken",
    "llama2c": "CppLlama2cTokenizer",
}


def load(path, kind, label):
    """The runner's tokenizer object for the file, or a UserError naming the target."""
    import pytorch_tokenizers

    tokenizer = getattr(pytorch_tokenizers, LOADERS[kind])()
    try:
        tokenizer.load(path)
    except Exception as e:  # the C++ loader raises RuntimeError("Failed to load ...")
        raise UserError(f"tokenizer {label}: ExecuTorch's runner cannot load {os.path.basename(path)} as a "
                        f"{kind} tokenizer ({str(e).splitlines()[0] if str(e) else type(e).__name__}); "
                        f"check the file, or set format to the one it is in ({', '.join(LOADERS)})") from e
    return tokenizer


def ids(config, tokenizer):
    """(bos id, eos ids, where each came from): the target's, else those its tokenizer_config.json
    names, else the tokenizer's own as the runner's library reads the file; each checked to be in
    the vocabulary."""
    vocab = tokenizer.vocab_size()
    named = special_tokens.named(config.tokenizer_config, config.src, config.label) if config.tokenizer_config else {}
    bos, eos, sources = special_tokens.tokenizer_ids(
        {"bos_id": config.bos_id, "eos_ids": list(config.eos_ids)}, named,
        {"bos_id": tokenizer.bos_tok(), "eos_ids": [tokenizer.eos_tok()]}, os.path.basename(config.src))
    for name, value in [("bos_id", bos)] + [("eos_ids", e) for e in eos]:
        if not 0 <= value < vocab:
            raise UserError(f"tokenizer {config.label}: {name} has {value}, outside the vocabulary of "
                            f"{os.path.basename(config.src)} (ids 0 to {vocab - 1}); set {name} to the id "
                            f"of that token in the file")
    return bos, eos, sources


def run(config):
    """Runs the action for a TokenizerConfig."""
    tokenizer = load(config.src, config.format, config.label)
    bos, eos, sources = ids(config, tokenizer)
    given = {"tokenizer_config": dict(manifest.file_record(config.tokenizer_config),
                                      name=os.path.basename(config.tokenizer_config))} if config.tokenizer_config else {}
    manifest.write_json(config.outputs["manifest"], {
        "format": FORMAT,
        "label": config.label,
        "tokenizer_format": config.format,
        "file": dict(manifest.file_record(config.src), name=os.path.basename(config.src)),
        **given,
        "vocab_size": tokenizer.vocab_size(),
        "bos_id": bos,
        "eos_ids": eos,
        "sources": sources,
        "toolchain": manifest.toolchain_record(config.identity),
    })
