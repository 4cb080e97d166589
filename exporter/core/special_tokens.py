"""The ids that begin and end a text (bos and eos) for ExecuTorch's LLM runner, in transformers'
order, and where each came from.

transformers takes them from a model's generation config (a folder's generation_config.json,
whose eos_token_id may be a list, else its config.json), then from the tokenizer's special tokens
(tokenizer_config.json's bos_token and eos_token, resolved in tokenizer.json). A tokenizer
target's own bos_id and eos_ids override them all. The tokenizer action records the tokenizer's
side (tokenizer_ids) and the export an hf_model's side (its manifest's "generation"), and
llm_program's lowering takes each id from the first that has it (program_ids), after checking
that the model's ids fit the tokenizer file.
"""

import json
import os

from exporter.core.errors import UserError

# Where a tokenizer manifest's id came from: the target's attribute ("bos_id", "eos_ids"), the
# tokenizer_config.json saved with the tokenizer, or else the tokenizer file itself as the
# runner's library reads it (its own choice: the special tokens named like bos and eos).
ATTRIBUTES = ("bos_id", "eos_ids")
# The key a model's config (generation_config.json, config.json) gives each attribute's ids under.
CONFIG_KEYS = {"bos_id": "bos_token_id", "eos_ids": "eos_token_id"}
TOKENIZER_CONFIG = "tokenizer_config.json"


def _token_text(value):
    """A tokenizer_config.json special token: a string, or an added token's {"content": ...}."""
    return value.get("content") if isinstance(value, dict) else value


def _token_ids(tokenizer_json):
    """{token text: id} of a Hugging Face tokenizer.json: its added tokens, then its vocabulary
    (a dict for BPE and WordPiece, a list of [piece, score] for Unigram)."""
    with open(tokenizer_json, encoding="utf-8") as f:
        data = json.load(f)
    vocab = (data.get("model") or {}).get("vocab") or {}
    found = {piece[0]: i for i, piece in enumerate(vocab)} if isinstance(vocab, list) else dict(vocab)
    found.update({token["content"]: token["id"] for token in data.get("added_tokens") or []})
    return found


def named(tokenizer_config, tokenizer_json, label):
    """{"bos_id": id, "eos_ids": [id]} for the tokens tokenizer_config.json names (bos_token,
    eos_token), resolved in tokenizer.json; a key is missing where the file names none."""
    try:
        with open(tokenizer_config, encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise UserError(f"tokenizer {label}: cannot read {os.path.basename(tokenizer_config)}: {e}; give the "
                        f"tokenizer_config.json that save_pretrained wrote beside tokenizer.json") from None
    ids = _token_ids(tokenizer_json)
    found = {}
    for key, attribute in (("bos_token", "bos_id"), ("eos_token", "eos_ids")):
        text = _token_text(config.get(key)) if isinstance(config, dict) else None
        if text is None:
            continue
        if text not in ids:
            raise UserError(f"tokenizer {label}: {TOKENIZER_CONFIG} names {key} {text!r}, which is not a token of "
                            f"{os.path.basename(tokenizer_json)}; give the tokenizer_config.json saved with this "
                            f"tokenizer, or set {attribute} on the tokenizer")
        found[attribute] = ids[text] if attribute == "bos_id" else [ids[text]]
    return found


def tokenizer_ids(given, named_ids, own, src):
    """(bos id, eos ids, {attribute: where it came from}) of a tokenizer target: `given` (its
    attributes, {"bos_id": id or None, "eos_ids": [ids] or []}), else `named_ids` (named()), else
    `own` (the runner's library's reading of the file whose name is `src`)."""
    picked, sources = {}, {}
    for attribute in ATTRIBUTES:
        for source, ids in ((attribute, given), (TOKENIZER_CONFIG, named_ids), (src, own)):
            if ids.get(attribute) not in (None, []):
                picked[attribute], sources[attribute] = ids[attribute], source
                break
    return picked["bos_id"], list(picked["eos_ids"]), sources


def as_list(value):
    """A config's bos_token_id or eos_token_id (an int, a list or None) as a list."""
    return [] if value is None else list(value) if isinstance(value, (list, tuple)) else [value]


def _tokenizer_side(tokenizer, attribute):
    """(the tokenizer manifest's id or ids, where they came from, for the program's manifest)."""
    return tokenizer[attribute], f"{tokenizer['sources'][attribute]} of tokenizer {tokenizer['label']}"


def _check_model_ids(program, tokenizer, model, attribute, ids):
    """Fails in one line when the model's `ids` for a tokenizer attribute fall outside the
    tokenizer's vocabulary, or do not hold the tokenizer's own end token."""
    key = CONFIG_KEYS[attribute]
    said = f"{model['from']} of hf_model {model['label']} says {key} {ids if attribute == 'eos_ids' else ids[0]}"
    vocab, file = tokenizer["vocab_size"], tokenizer["file"]["name"]
    fix = f"fix {key} in {model['from']}, or set {attribute} on tokenizer {tokenizer['label']}"
    outside = [i for i in ids if not 0 <= i < vocab]
    if outside:
        raise UserError(f"llm_program {program}: {said}, but {outside[0]} is outside the vocabulary of tokenizer "
                        f"{tokenizer['label']} ({file}: ids 0 to {vocab - 1}); {fix}")
    if attribute == "eos_ids" and not set(tokenizer["eos_ids"]) & set(ids):
        where = (f"its {TOKENIZER_CONFIG}'s eos_token" if tokenizer["sources"]["eos_ids"] == TOKENIZER_CONFIG else
                 f"as ExecuTorch's tokenizer library reads {file} alone: give the tokenizer its {TOKENIZER_CONFIG}, "
                 f"which names its eos_token")
        raise UserError(f"llm_program {program}: {said}, but tokenizer {tokenizer['label']}'s end token in {file} is "
                        f"{tokenizer['eos_ids'][0]} ({where}); {fix}")


def program_ids(program, tokenizer, model):
    """(bos id, eos ids, {"get_bos_id": where from, "get_eos_ids": where from}) of llm_program
    `program` (its label): from `model`, an hf_model's generation record ({"label", "from",
    "bos_token_id", "eos_token_id"}; None for another model), unless `tokenizer` (its manifest)
    has the id from its target's own attribute or the model has none."""
    picked = {}
    for attribute, key in CONFIG_KEYS.items():
        picked[attribute] = _tokenizer_side(tokenizer, attribute)
        given = as_list(model[key]) if model else []
        if given and tokenizer["sources"][attribute] != attribute:
            _check_model_ids(program, tokenizer, model, attribute, given)
            picked[attribute] = (given if attribute == "eos_ids" else given[0],
                                 f"{model['from']} of hf_model {model['label']}")
    (bos, bos_from), (eos, eos_from) = picked["bos_id"], picked["eos_ids"]
    return bos, list(eos), {"get_bos_id": bos_from, "get_eos_ids": eos_from}
