"""Greedy decoding, once for every generation test (llm_generation_test, seq2seq_generation_test,
multimodal_generation_test): the loop an eager model or a program's methods run as an app runs
them, and transformers' own generate(), the reference for a transformers model.

Both stop as ExecuTorch's runners stop: after `count` tokens, or at an end id, which is kept (the
runners hand it to their token callback before they stop).
"""


def tokens(next_logits, count, end_ids):
    """Greedy ids: next_logits(ids) gives the logits whose last row scores the token after `ids`,
    the ids generated so far ([] for the first: the prompt's call)."""
    ids = []
    while len(ids) < count and not (ids and ids[-1] in end_ids):
        ids.append(int(next_logits(ids)[..., -1, :].argmax()))
    return ids


def ended(ids, end_ids, count):
    """Whether a generation stopped at an end id before its limit of `count` ids: only then does
    it show that a runner stops where the model does (at the limit, one that ignores the end id
    stops too)."""
    return bool(ids) and ids[-1] in end_ids and len(ids) < count


def transformers_tokens(model, inputs, count):
    """Greedy ids from transformers' generate() of `model` (a transformers PreTrainedModel) after
    `inputs` (its keyword inputs: input_ids and attention_mask, or an encoder's), stopping at the
    end ids of the model's generation config (a folder's generation_config.json, else its
    config). The run takes only that config's token ids: the runners sample nothing and apply no
    penalties, so neither does the reference. An encoder-decoder's decoder starts from its
    decoder_start_token_id, which the ids returned leave out, as they leave out a prompt.

    Called as GenerationMixin.generate: Whisper's own generate() adds its language and timestamp
    logic and drops the start and end tokens from what it returns, and it calls this one for a
    short input."""
    import torch
    from transformers import GenerationConfig, GenerationMixin

    given = model.generation_config
    settings = GenerationConfig(
        do_sample=False, num_beams=1, max_new_tokens=count, bos_token_id=given.bos_token_id,
        eos_token_id=given.eos_token_id, pad_token_id=given.pad_token_id,
        decoder_start_token_id=given.decoder_start_token_id)
    with torch.no_grad():
        out = GenerationMixin.generate(model, **inputs, generation_config=settings)
    skip = 1 if model.config.is_encoder_decoder else inputs["input_ids"].shape[1]
    return [int(i) for i in out[0, skip:]]
