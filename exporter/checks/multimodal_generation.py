"""The runner behind multimodal_generation_test: a multimodal_program generates, greedily, in
ExecuTorch's MultimodalRunner (C++ behind Python bindings) from one image and one prompt, as an
app feeds it, and must give the eager model's tokens, token for token; with several prompts, also
as a chat whose earlier turns the runner prefills (prefill, then generate). Prints each
conversation's text, the time to the first token and tokens per second.

The app's side: it reads an image file (binary PPM or PGM here) into pixels, checks their size
against the program's get_image_height, get_image_width and get_image_channels, scales them to
0..1 and gives [channels, height, width] floats to the runner with the prompt's text. The eager
side follows the runner: the image's embeddings, then the prompt's (encoded without begin or end
tokens), each one call of the decoder at the next positions; then one token per call, until an
end id or max_new_tokens (capped by get_max_context_len).
"""

import json
import os
import sys

import torch

from exporter.actions import eager_quantize, tokenizer
from exporter.actions.multimodal import METHODS
from exporter.checks import contract, generation, greedy


def read_image(path):
    """(pixels [channels, height, width] uint8) of a binary PPM (P6, RGB) or PGM (P5, gray)."""
    with open(path, "rb") as f:
        data = f.read()
    fields, offset = [], 0
    while len(fields) < 4:  # magic, width, height, maxval, separated by whitespace (no comments)
        while offset < len(data) and data[offset:offset + 1].isspace():
            offset += 1
        end = offset
        while end < len(data) and not data[end:end + 1].isspace():
            end += 1
        fields.append(data[offset:end].decode("ascii", "replace"))
        offset = end
    magic, width, height, maxval = fields[0], *(int(x) if x.isdigit() else -1 for x in fields[1:])
    channels = {"P6": 3, "P5": 1}.get(magic)
    pixels = data[offset + 1:]
    # A header without sizes (-1 each) must not pass as -1 x -1 pixels, whose product is positive.
    if channels is None or maxval != 255 or min(width, height) < 1 or len(pixels) != width * height * channels:
        raise ValueError(f"image {os.path.basename(path)} is not a binary 8-bit PPM or PGM; convert it "
                         f"(e.g. with ImageMagick: convert in.png -depth 8 out.ppm)")
    hwc = torch.frombuffer(bytearray(pixels), dtype=torch.uint8).view(height, width, channels)
    return hwc.permute(2, 0, 1).contiguous()


def check_image(config, name, pixels, constants):
    """Fails in one line unless the image has the program's size and channels."""
    want = [constants["get_image_channels"], constants["get_image_height"], constants["get_image_width"]]
    if list(pixels.shape) != want:
        c, h, w = want
        raise ValueError(f"image {name} is {'x'.join(map(str, pixels.shape))} (channels x height x width) but "
                         f"{config.program} takes {c}x{h}x{w} (its channels and image_size); resize it to "
                         f"{w}x{h} {'RGB' if c == 3 else 'RGBA'}, as the app must before calling the runner")


# Image tokens of the prompt templates of LLaVA and SmolVLM, Llama 3.2 Vision, Qwen2-VL and Gemma 3.
IMAGE_TOKENS = ("<image>", "<|image|>", "<|image_pad|>", "<start_of_image>")


def check_prompts(config):
    """Fails in one line on a prompt that writes an image token: the program has none (the
    runner places an image's embeddings where the app lists the image), so the tokenizer would
    read it as text and the model would see no image there."""
    for prompt in config.prompts:
        for token in IMAGE_TOKENS:
            if token in prompt:
                raise ValueError(
                    f"prompt {prompt!r} holds {prompt.count(token)} image token(s) {token!r}, but {config.program} "
                    f"has no image token: the runner places each image where the app lists it among the inputs "
                    f"(this test gives {len(config.images)} image(s), each before the prompt) and would read "
                    f"{token!r} as text; remove it from prompts")


def eager_tokens(models, inputs, count, eos_ids):
    """Greedy ids after `inputs` (("image", pixels) or ("text", ids), in order), from the eager
    model's three parts, each input one decoder call as the runner prefills it, the parts called
    with the names of the methods' inputs (multimodal_program's shape specs)."""
    vision, embed, decoder = models
    position = 0

    def call(embeddings):
        nonlocal position
        logits = decoder(embeddings=embeddings, input_pos=torch.arange(position, position + embeddings.shape[1]))
        position += embeddings.shape[1]
        return logits

    def next_logits(ids):
        if ids:
            return call(embed(tokens=torch.tensor([ids[-1:]])))
        for kind, value in inputs:
            logits = call(vision(image=value.unsqueeze(0)) if kind == "image" else embed(tokens=torch.tensor([value])))
        return logits

    with torch.no_grad():
        return greedy.tokens(next_logits, count, eos_ids)


def runner_pieces(config, history, inputs, count):
    """(pieces the MultimodalRunner's token callback gave, seconds to the first, seconds between
    the first and the last), from a fresh runner (a fresh cache) that prefills `history` (a chat's
    earlier turns; prefill) and then generates from `inputs`, each ("image", pixels) or ("text",
    prompt)."""
    from executorch.extension.llm.runner import GenerationConfig, MultimodalRunner, make_image_input, make_text_input

    def runner_inputs(listed):
        return [make_image_input(v) if kind == "image" else make_text_input(v) for kind, v in listed]

    runner = MultimodalRunner(config.pte, config.tokenizer["file"], *([config.ptd] if config.ptd else []))
    settings = GenerationConfig(max_new_tokens=count, temperature=0.0, echo=False)
    if history:
        runner.prefill(runner_inputs(history))
    return generation.timed_pieces(
        lambda on_token: runner.generate(runner_inputs(inputs), settings, token_callback=on_token))


def conversations(config, images):
    """[(title, history, inputs)]: each image with each prompt in one generate; with several
    prompts, also each image and the prompts but the last prefilled as a chat's history, then
    the last prompt generated from."""
    cases = [(f"image {name} + prompt {prompt!r}", [], [("image", pixels), ("text", prompt)])
             for name, pixels in images.items() for prompt in config.prompts]
    if len(config.prompts) > 1:
        cases += [(f"chat: prefill image {name} + {len(config.prompts) - 1} prompt(s), generate from "
                   f"{config.prompts[-1]!r}", [("image", pixels)] + [("text", p) for p in config.prompts[:-1]],
                   [("text", config.prompts[-1])]) for name, pixels in images.items()]
    return cases


def float_agreement(expected, floats):
    """Tokens of `expected` (a quantized model's) that the float model's `floats` share before the
    first that differs: after it, the two continue different texts."""
    same = 0
    while same < min(len(expected), len(floats)) and expected[same] == floats[same]:
        same += 1
    return same


def _case(config, context, title, history, inputs):
    """(same tokens, (tokens shared with the float model, tokens), report lines) of one
    conversation; context: (models loader, tokenizer, constant methods, eos ids)."""
    load_models, runner_tokenizer, constants, eos_ids = context
    ids = {text: runner_tokenizer.encode(text, 0, 0) for kind, text in history + inputs if kind == "text"}
    for text, tokens in ids.items():
        if not 0 < len(tokens) < constants["get_max_seq_len"]:
            raise ValueError(f"prompt {text!r} is {len(tokens)} tokens; {config.program} takes 1 to "
                             f"{constants['get_max_seq_len'] - 1} (max_seq_len - 1): shorten it in prompts")
    eager_inputs = [(kind, ids[v] if kind == "text" else v) for kind, v in history + inputs]
    sizes = [constants["get_image_seq_len"] if kind == "image" else len(v) for kind, v in eager_inputs]
    count = min(config.max_new_tokens, constants["get_max_context_len"] - sum(sizes))
    expected = eager_tokens(load_models(), eager_inputs, count, eos_ids)  # fresh models: a fresh cache
    pieces = [runner_tokenizer.decode(token) for token in expected]
    got, first, rest = runner_pieces(config, history, inputs, count)
    same = got == pieces
    rate = f", {(len(got) - 1) / rest:.0f} tokens/s after it" if rest > 0 else ""
    lines = [f"  {title} ({' + '.join(map(str, sizes))} embeddings): eager{' (quantized)' if config.quantized else ''} "
             f"continues {''.join(pieces)!r} ({len(expected)} tokens)",
             f"    MultimodalRunner: {'same tokens' if same else 'DIFFERENT: ' + repr(''.join(got))}; first "
             f"token after {first * 1000:.1f} ms{rate}"]
    agreement = (len(expected), len(expected))
    if config.quantized:
        floats = eager_tokens(load_models(quantized=False), eager_inputs, count, eos_ids)
        agreement = (float_agreement(expected, floats), len(expected))
        rest = "".join(runner_tokenizer.decode(t) for t in floats[agreement[0]:])
        alike = f"the first {agreement[0]} of {agreement[1]} tokens alike, then {rest!r}"
        lines.append(f"    float model: {'the same tokens' if floats == expected else alike}")
    return same, agreement, lines


def run(config):
    """(ok, report text) of a contract.MultimodalGenerationConfig."""
    from exporter.core.model_loader import load_model

    with open(config.tokenizer["manifest"], encoding="utf-8") as f:
        eos_ids = json.load(f)["eos_ids"]
    with open(config.manifest, encoding="utf-8") as f:
        constants = json.load(f)["constant_methods"]
    if "get_image_seq_len" not in constants:
        raise ValueError(f"{config.program} has no get_image_seq_len; make it with multimodal_program")
    check_prompts(config)
    images = {os.path.basename(p): read_image(p) for p in config.images}
    for name, pixels in images.items():
        check_image(config, name, pixels, constants)
    images = {name: pixels.float() / 255 for name, pixels in images.items()}  # what the app gives: 0..1, [C, H, W]
    runner_tokenizer = tokenizer.load(config.tokenizer["file"], config.tokenizer["format"], config.tokenizer["label"])
    parts = (config.vision_encoder, config.token_embedding, config.text_decoder)

    def load_models(quantized=True):  # one module per model: the methods may share one, and its cache
        loaded, models = {}, []
        for method, model in zip(METHODS, parts):
            scheme = config.quantized.get(method) if quantized else None
            key = (model.label, scheme and scheme["scheme"], scheme and scheme["group_size"])
            if key not in loaded:
                loaded[key] = load_model(model)
                if scheme:  # as torch_export's quantize did before exporting this method
                    eager_quantize.apply(loaded[key], scheme["scheme"], scheme["group_size"], model.label)
            models.append(loaded[key])
        return models

    lines = [f"{config.label}: {config.program} in ExecuTorch's MultimodalRunner, greedy, against the eager "
             f"model {', '.join(dict.fromkeys(m.label for m in parts))}"]
    ok, shared, total = True, 0, 0
    for title, history, inputs in conversations(config, images):
        context = (load_models, runner_tokenizer, constants, eos_ids)
        same, (alike, count), case_lines = _case(config, context, title, history, inputs)
        ok, lines, shared, total = ok and same, lines + case_lines, shared + alike, total + count
    if config.quantized:
        lines.append(f"Against the float model: {shared} of {total} tokens alike before each conversation's first "
                     f"difference ({', '.join(sorted(config.quantized))} quantized: "
                     f"{', '.join(sorted({q['scheme'] for q in config.quantized.values()}))})")
    if not ok:
        lines.append("The program does not generate what the model generates: check each method against the "
                     "runner's contract (docs/llm.md, \"Images and audio\"), then the program's numerics_test.")
    return ok, "\n".join(lines) + "\n"


def main(argv):
    return contract.main(argv, contract.MultimodalGenerationConfig, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
