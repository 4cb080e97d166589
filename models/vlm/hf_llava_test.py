"""hf_llava's three parts, called as the runner calls them (the eager side of
hf_llava_mm_generation_test), generate what transformers' own LlavaForConditionalGeneration.generate
does from the same image and prompt with LLaVA's image tokens: the wrapper changes the calls, not
the model."""

import os

import pytest
import torch

from exporter.checks.multimodal_generation import eager_tokens, read_image
from models.vlm import hf_llava

IMAGES = os.path.join(os.path.dirname(__file__), "images")

# Two prompts' ids in the 96-token vocabulary, none the image token (95).
PROMPTS = [[40, 8, 22, 61, 5, 17], [3, 70, 33, 12]]


@pytest.mark.parametrize("image", ["gradient.ppm", "noise.ppm"])
@pytest.mark.parametrize("prompt", PROMPTS)
def test_the_runners_calls_generate_what_transformers_generates(image, prompt):
    pixels = read_image(os.path.join(IMAGES, image)).float() / 255
    model = hf_llava.hf_llava()
    ours = eager_tokens((model, model, model), [("image", pixels), ("text", prompt)], 10, eos_ids=[1])

    llava = hf_llava.hf_llava().llava
    mean, std = model.mean, model.std  # CLIPImageProcessor's normalisation, done by the app in transformers
    seq_len = model(image=pixels.unsqueeze(0)).shape[1]
    ids = torch.tensor([[hf_llava.CONFIG["image_token_id"]] * seq_len + prompt])
    with torch.no_grad():
        out = llava.generate(input_ids=ids, pixel_values=(pixels.unsqueeze(0) - mean) / std, max_new_tokens=10,
                             do_sample=False)
    assert ours == out[0, ids.shape[1]:].tolist()
