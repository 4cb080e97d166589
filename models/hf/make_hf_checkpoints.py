"""Writes the zoo's Hugging Face checkpoint folders the way a team's fine-tuned weights arrive:
transformers' save_pretrained of a seeded model (config.json, model.safetensors).

    bert/   a BertForMaskedLM (fill-mask)
    vit/    a ViTForImageClassification (image-classification, 10 classes)

Deterministic; //models/hf:generated_files_test checks that the folders are this script's output.

    python models/hf/make_hf_checkpoints.py models/hf
"""

import os
import sys


def _bert():
    from transformers import BertConfig, BertForMaskedLM

    return BertForMaskedLM(BertConfig(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=128, max_position_embeddings=128))


def _vit():
    from transformers import ViTConfig, ViTForImageClassification

    return ViTForImageClassification(ViTConfig(image_size=32, patch_size=4, num_channels=3, hidden_size=64,
                                               num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                                               num_labels=10))


FOLDERS = {"bert": _bert, "vit": _vit}


def write(root):
    import torch

    for name, make in FOLDERS.items():
        torch.manual_seed(11)
        make().eval().save_pretrained(os.path.join(root, name))


if __name__ == "__main__":
    write(sys.argv[1])
