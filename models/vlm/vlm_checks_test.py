"""What a multimodal_program's build and its generation test refuse, one line each naming the
target and the fix: an image of the wrong size or channels (for the test and for the encoder's
export), and encoders whose embeddings differ in width from the decoder's. The checks run here on
the zoo's real exports and images. Also: the images are make_images.py's output, and the
program's manifest holds the constant methods the runner reads."""

import json

import pytest
import torch
from runfiles import Runfiles

from exporter.actions import multimodal, registry
from exporter.checks import contract, multimodal_generation
from exporter.core.errors import UserError
from exporter.formats import pt2
from models.vlm import make_images

RUNFILES = Runfiles.Create()


def _path(name):
    return RUNFILES.Rlocation(f"rules_torch_export/models/vlm/{name}")


def _programs():
    return {m: pt2.load(_path(f"tiny_vlm_mm_{m}_ep.pt2")) for m in multimodal.METHODS}


def _lower_config(tmp_path, image_size=(16, 16)):
    manifest = tmp_path / "tok.json"
    manifest.write_text(json.dumps({"vocab_size": 96, "bos_id": 0, "eos_ids": [1]}))
    return registry.LowerConfig.from_json({
        "label": "//pkg:vlm", "identity": "-", "exported_label": "//pkg:vlm_ep", "pt2": "-",
        "multimodal": {"max_seq_len": 48, "max_context_len": 48, "image_size": list(image_size), "channels": 3,
                       "tokenizer": {"label": "//pkg:tok", "manifest": str(manifest)}}})


def test_the_images_are_make_images_output(tmp_path):
    make_images.main(str(tmp_path))
    for name in make_images.IMAGES:
        assert (tmp_path / name).read_bytes() == open(_path(f"images/{name}"), "rb").read()


def test_the_program_has_the_runners_constant_methods():
    with open(_path("tiny_vlm_mm.pte.json"), encoding="utf-8") as f:
        constants = json.load(f)["constant_methods"]
    assert {k: v for k, v in constants.items() if k != "input_schema"} == {
        "get_max_seq_len": 48, "get_max_context_len": 48, "get_vocab_size": 96, "get_bos_id": 0,
        "get_eos_ids": [1], "use_kv_cache": True, "enable_dynamic_shape": True, "get_image_height": 16,
        "get_image_width": 16, "get_image_channels": 3, "get_image_seq_len": 4}


def _generation_config(prompts=("x",), images=()):
    return contract.MultimodalGenerationConfig.from_json({
        "label": "//pkg:vlm_generation_test", "program": "//pkg:vlm", "pte": "-", "manifest": "-",
        "tokenizer": {}, "images": list(images), "prompts": list(prompts), "max_new_tokens": 1,
        **{m: {"label": "//pkg:m", "entry": "m:m", "import_roots": []} for m in multimodal.METHODS}})


CONSTANTS = {"get_image_channels": 3, "get_image_height": 16, "get_image_width": 16}


@pytest.mark.parametrize("header, size, found", [(b"P6\n20 20\n255\n", 20 * 20 * 3, "3x20x20"),
                                                 (b"P5\n16 16\n255\n", 16 * 16, "1x16x16")])
def test_an_image_of_the_wrong_size_or_channels_names_the_fix(tmp_path, header, size, found):
    image = tmp_path / "photo.ppm"
    image.write_bytes(header + bytes(size))
    pixels = multimodal_generation.read_image(str(image))
    with pytest.raises(ValueError) as e:
        multimodal_generation.check_image(_generation_config(), "photo.ppm", pixels, CONSTANTS)
    assert str(e.value) == (f"image photo.ppm is {found} (channels x height x width) but //pkg:vlm takes 3x16x16 "
                            f"(its channels and image_size); resize it to 16x16 RGB, as the app must before "
                            f"calling the runner")


@pytest.mark.parametrize("data", [b"P6\nx y\n255\n" + bytes(3), b"P6\n4 4\n255\n" + bytes(5), b"GIF89a", b""])
def test_a_file_that_is_no_binary_ppm_or_pgm_names_the_fix(tmp_path, data):
    image = tmp_path / "photo.ppm"
    image.write_bytes(data)
    with pytest.raises(ValueError) as e:
        multimodal_generation.read_image(str(image))
    assert str(e.value) == ("image photo.ppm is not a binary 8-bit PPM or PGM; convert it (e.g. with ImageMagick: "
                            "convert in.png -depth 8 out.ppm)")


@pytest.mark.parametrize("prompt, count, token", [("What is in <image>", 1, "<image>"),
                                                   ("<|image|> and <|image|>: which is larger", 2, "<|image|>")])
def test_a_prompt_with_image_tokens_names_how_images_are_placed(prompt, count, token):
    config = _generation_config(prompts=["A small model", prompt], images=["a.ppm"])
    with pytest.raises(ValueError) as e:
        multimodal_generation.check_prompts(config)
    assert str(e.value) == (f"prompt {prompt!r} holds {count} image token(s) {token!r}, but //pkg:vlm has no image "
                            f"token: the runner places each image where the app lists it among the inputs (this "
                            f"test gives 1 image(s), each before the prompt) and would read {token!r} as text; "
                            f"remove it from prompts")


def test_the_zoo_prompts_pass_the_check():
    multimodal_generation.check_prompts(_generation_config(prompts=["What is in the picture", "A small model"]))


def test_tokens_alike_with_the_float_model_stop_at_the_first_difference():
    assert multimodal_generation.float_agreement([5, 6, 7, 8], [5, 6, 9, 8]) == 2
    assert multimodal_generation.float_agreement([5, 6], [5, 6, 7]) == 2
    assert multimodal_generation.float_agreement([4], [5]) == 0


def test_an_encoder_exported_for_another_image_names_the_attributes(tmp_path):
    with pytest.raises(UserError) as e:
        multimodal.constants(_lower_config(tmp_path, image_size=(32, 32)), _programs())
    assert str(e.value) == ("multimodal_program //pkg:vlm: vision_encoder takes float32[1, 3, 16, 16] but "
                            "image_size and channels describe float32[1, 3, 32, 32]; set image_size and channels "
                            "to the image the model was trained on")


class NarrowEncoder(torch.nn.Module):
    """Four 32-wide embeddings of a 16x16 image: half the decoder's width."""

    def forward(self, image):
        return image.reshape(1, 4, 192)[..., :32]


def test_embeddings_of_another_width_name_both_methods(tmp_path):
    programs = dict(_programs(), vision_encoder=torch.export.export(NarrowEncoder(), (torch.rand(1, 3, 16, 16),)))
    with pytest.raises(UserError) as e:
        multimodal.constants(_lower_config(tmp_path), programs)
    assert str(e.value) == ("multimodal_program //pkg:vlm: vision_encoder gives embeddings 32 wide but "
                            "text_decoder takes 64; set embedding_dim to the decoder's width and give encoders "
                            "that project to it")


def test_the_zoo_programs_checks_pass(tmp_path):
    constants = multimodal.constants(_lower_config(tmp_path), _programs())
    assert constants["get_image_seq_len"] == 4
