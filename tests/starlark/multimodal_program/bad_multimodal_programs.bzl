"""Every bad multimodal_program fails analysis with one message that names it and the fix: the
image the runner takes (channels, image_size), a table of bad programs (bad_target_test_suite)."""

load("//rules:defs.bzl", "multimodal_program")
load("//tests/starlark:bad_target_test.bzl", "bad_target_test_suite")

VLM = dict(
    embedding_dim = 64,
    max_seq_len = 48,
    text_decoder = "//models/vlm:tiny_vlm",
    token_embedding = "//models/vlm:tiny_vlm",
    tokenizer = "//models/llm:tiny_tokenizer",
    vision_encoder = "//models/vlm:tiny_vlm",
)

BAD_MULTIMODAL_PROGRAMS = [
    struct(
        name = "gray_image",
        attrs = dict(VLM, channels = 1, image_size = [16, 16]),
        needles = ["channels = 1 is not one ExecuTorch's MultimodalRunner takes; use 3 (RGB) or 4 (RGBA) and convert the image in the app"],
    ),
    struct(
        name = "one_side",
        attrs = dict(VLM, image_size = [16]),
        needles = ["image_size = [16] must be [height, width], two ints of at least 1, e.g. [224, 224]"],
    ),
]

def bad_multimodal_program_test_suite(name):
    bad_target_test_suite(name, multimodal_program, BAD_MULTIMODAL_PROGRAMS)
