"""Every bad multimodal_generation_test fails analysis with one message that names it and the
fix (bad_target_test_suite's table)."""

load("//rules:defs.bzl", "multimodal_generation_test")
load("//tests/starlark:bad_target_test.bzl", "bad_target_test_suite")

BAD_MULTIMODAL_GENERATION_TESTS = [
    struct(
        name = "pt2e_decoder",
        attrs = dict(
            images = ["//models/vlm:images/gradient.ppm"],
            program = ":pt2e_vlm",
            prompts = ["A small model"],
            tokenizer = "//models/llm:tiny_tokenizer",
        ),
        needles = ["//tests/starlark/multimodal_generation_test:pt2e_vlm's text_decoder is quantized by torch_quantize, which has no eager model to generate with; quantize its export with torch_export's quantize (multimodal_program's quantize) instead"],
    ),
]

def bad_multimodal_generation_test_suite(name):
    bad_target_test_suite(name, multimodal_generation_test, BAD_MULTIMODAL_GENERATION_TESTS)
