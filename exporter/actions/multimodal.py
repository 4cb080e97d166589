"""What ExecuTorch's MultimodalRunner reads from a program: three methods and the text runner's
constant methods, written by the lowering of a multimodal_program and checked where the runner
would refuse or misbehave.

    vision_encoder(image [1, C, H, W] float32) -> embeddings [1, n, dim]
    token_embedding(tokens [1, seq] int64) -> embeddings [1, seq, dim]
    text_decoder(embeddings [1, seq, dim], input_pos [seq] int64) -> logits [1, seq, vocab]

The runner sends each image through vision_encoder and each text through token_embedding, and
feeds either's embeddings to text_decoder at the next positions; each new token goes through
token_embedding and text_decoder. The constant methods are llm_program's (actions/llm.py), plus
the image's facts an app resizes to: get_image_height, get_image_width, get_image_channels and
get_image_seq_len (n; the runner itself reads none of these four).
"""

import json

import torch

from exporter.core import shape_spec
from exporter.core.errors import UserError

METHODS = ("vision_encoder", "token_embedding", "text_decoder")


def _output(ep):
    output = next(n for n in ep.graph.nodes if n.op == "output").args[0]
    first = output[0] if isinstance(output, (list, tuple)) else output
    return first.meta.get("val") if hasattr(first, "meta") else None


def _width(value):
    """The last dim of a [1, n, dim] value, or None when it is not one with a fixed dim."""
    if not isinstance(value, torch.Tensor) or value.dim() != 3 or not isinstance(value.shape[-1], int):
        return None
    return int(value.shape[-1])


def _check_image(config, ep):
    """The image the vision encoder takes is the one the target's attributes describe."""
    mm, label = config.multimodal, config.label
    image = shape_spec.user_input_values(ep)[0]
    expected = [1, mm.channels, *mm.image_size]
    if list(image.shape) != expected or image.dtype != torch.float32:
        raise UserError(f"multimodal_program {label}: vision_encoder takes {str(image.dtype)[6:]}"
                        f"{list(image.shape)} but image_size and channels describe float32{expected}; set "
                        f"image_size and channels to the image the model was trained on")


def _widths(config, programs):
    """(embeddings per image, the decoder's width), checked against both encoders' widths."""
    label = config.label
    decoder = _width(shape_spec.user_input_values(programs["text_decoder"])[0])
    if decoder is None:
        raise UserError(f"multimodal_program {label}: text_decoder's first input is not embeddings [1, seq, dim] "
                        f"with a fixed dim; give a decoder over embeddings")
    for method in ("vision_encoder", "token_embedding"):
        width = _width(_output(programs[method]))
        if width != decoder:
            raise UserError(f"multimodal_program {label}: {method} gives embeddings {width} wide but text_decoder "
                            f"takes {decoder}; set embedding_dim to the decoder's width and give encoders that "
                            f"project to it")
    image = _output(programs["vision_encoder"])
    if not isinstance(image.shape[1], int) or not 0 < image.shape[1] < config.multimodal.max_seq_len:
        raise UserError(f"multimodal_program {label}: one image makes {image.shape[1]} embeddings but "
                        f"text_decoder takes 1 to {config.multimodal.max_seq_len - 1} per call; raise "
                        f"max_seq_len above {image.shape[1]}")
    return int(image.shape[1]), decoder


def constants(config, programs):
    """The runner's constant methods for a LowerConfig with .multimodal, checked."""
    mm, label = config.multimodal, config.label
    if set(programs) != set(METHODS):
        raise UserError(f"multimodal_program {label}: the runner calls {list(METHODS)}; the program has "
                        f"{sorted(programs)}")
    _check_image(config, programs["vision_encoder"])
    image_seq_len, _ = _widths(config, programs)
    logits = _output(programs["text_decoder"])
    if _width(logits) is None:
        raise UserError(f"multimodal_program {label}: text_decoder's first output is not logits [1, seq, "
                        f"vocab] with a fixed vocab; the runner reads the next token from it")
    with open(mm.tokenizer.manifest, encoding="utf-8") as f:
        tokenizer = json.load(f)
    vocab = int(logits.shape[-1])
    if tokenizer["vocab_size"] > vocab:
        raise UserError(f"multimodal_program {label}: tokenizer {mm.tokenizer.label} has "
                        f"{tokenizer['vocab_size']} tokens but text_decoder's logits have {vocab}; use the "
                        f"tokenizer the model was trained with")
    return {
        "get_max_seq_len": mm.max_seq_len,
        "get_max_context_len": mm.max_context_len,
        "get_vocab_size": vocab,
        "get_bos_id": tokenizer["bos_id"],
        "get_eos_ids": tokenizer["eos_ids"],
        "use_kv_cache": True,
        "enable_dynamic_shape": True,
        "get_image_height": mm.image_size[0],
        "get_image_width": mm.image_size[1],
        "get_image_channels": mm.channels,
        "get_image_seq_len": image_seq_len,
    }


def check_context(config, ep):
    """Fails unless text_decoder takes an embedding at position max_context_len - 1, the last
    the runner may write (actions/llm.py's check_context, over embeddings)."""
    last = config.multimodal.max_context_len - 1
    width = _width(shape_spec.user_input_values(ep)[0])
    module = ep.module()
    args, kwargs = shape_spec.call_arguments(
        ep, {"embeddings": torch.zeros(1, 1, width), "input_pos": torch.tensor([last])}, module)
    try:
        with torch.no_grad():
            module(*args, **kwargs)
    except (IndexError, RuntimeError) as e:
        raise UserError(f"multimodal_program {config.label}: text_decoder cannot take an embedding at position "
                        f"{last} (max_context_len - 1): {str(e).splitlines()[0]}; set max_seq_len (and "
                        f"max_context_len) to at most the model's cache length") from e
