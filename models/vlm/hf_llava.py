"""transformers' LlavaForConditionalGeneration (a tiny CLIP vision tower, a one-layer Llama),
seeded, behind the three calls ExecuTorch's MultimodalRunner makes (docs/llm.md, "Images and
audio"). Every part is transformers' own: get_image_features (the vision tower and the
projector), get_input_embeddings, and TorchExportableModuleWithStaticCache (the KV cache in
buffers, over inputs_embeds). What is ours is the call signature, and the image's
normalisation, which LLaVA's image processor does in the app and the runner does not.

transformers' decompose_for_generation gives no vision component and parts that take a
StaticCache argument, which the runner cannot pass, hence this module.
"""

import torch
from torch import nn

# Small enough for CI: one layer each, 32 wide, a 16x16 image in 8x8 patches (4 embeddings:
# the "default" strategy drops CLIP's class token). The Llama's 96 tokens are the zoo's
# tokenizer's (//models/llm:tiny_tokenizer: bos 0, eos 1); the image token is never written
# (the runner places images by input order) but must be an id of the vocabulary. Weights are
# drawn 10x wider than transformers' default (0.02): with it, a random model's image
# embeddings are too small to change its tokens, and the test would not see the image.
CONFIG = {
    "model_type": "llava",
    "image_token_id": 95,
    "initializer_range": 0.2,
    "projector_hidden_act": "gelu",
    "vision_feature_layer": -1,  # the last layer's states (LLaVA's -2 would skip the only layer)
    "vision_feature_select_strategy": "default",
    "vision_config": {
        "model_type": "clip_vision_model",
        "hidden_size": 32,
        "image_size": 16,
        "intermediate_size": 64,
        "num_attention_heads": 2,
        "num_hidden_layers": 1,
        "patch_size": 8,
        "projection_dim": 32,
    },
    "text_config": {
        "model_type": "llama",
        "bos_token_id": 0,
        "eos_token_id": 1,
        "head_dim": 8,
        "hidden_size": 32,
        "initializer_range": 0.2,
        "intermediate_size": 64,
        "max_position_embeddings": 64,
        "num_attention_heads": 4,
        "num_hidden_layers": 1,
        "num_key_value_heads": 2,
        "vocab_size": 96,
    },
}


class LlavaForRunner(nn.Module):
    """forward(image) -> image embeddings, forward(tokens) -> token embeddings, forward(embeddings,
    input_pos) -> logits: the part the arguments name (the methods' input names), so one module
    serves the three methods and, eager, keeps the cache across a generation's calls."""

    def __init__(self, model, max_cache_len):
        super().__init__()
        from transformers.integrations.executorch import TorchExportableModuleWithStaticCache
        from transformers.utils.constants import OPENAI_CLIP_MEAN, OPENAI_CLIP_STD

        self.llava = model
        model.generation_config.cache_implementation = "static"
        self.decoder = TorchExportableModuleWithStaticCache(model, batch_size=1, max_cache_len=max_cache_len)
        self.register_buffer("mean", torch.tensor(OPENAI_CLIP_MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(OPENAI_CLIP_STD).view(1, 3, 1, 1), persistent=False)

    def forward(self, image=None, tokens=None, embeddings=None, input_pos=None):
        if image is not None:  # pixels in 0..1, as the app gives them; CLIPImageProcessor's normalisation
            features = self.llava.get_image_features(pixel_values=(image - self.mean) / self.std)
            return features.pooler_output[0].unsqueeze(0)
        if tokens is not None:
            return self.llava.get_input_embeddings()(tokens)
        return self.decoder(inputs_embeds=embeddings, cache_position=input_pos)


def hf_llava(max_cache_len=32, seed=0):
    """The seeded model (transformers' initialisation under a fixed seed) behind the runner's calls."""
    from transformers import AutoConfig, LlavaForConditionalGeneration

    config = dict(CONFIG)
    model_type = config.pop("model_type")
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(AutoConfig.for_model(model_type, **config)).eval()
    return LlavaForRunner(model, max_cache_len).eval()
