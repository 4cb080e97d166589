"""The Hugging Face architectures every build checks (docs/huggingface.md): one row each, a tiny
seeded config of transformers' own class for its task, nothing downloaded. hf_architectures()
declares, per row, the hf_model and its program with a numerics test against eager, and for the
generative rows the runner's program with a generation test (ExecuTorch's TextLLMRunner's tokens
against eager's). The SEQ2SEQ rows' generation tests are in the BUILD file, as the docs'
example of seq2seq_generation_test."""

load(
    "//rules:defs.bzl",
    "executorch_program",
    "hf_model",
    "llm_generation_test",
    "llm_program",
    "numerics_test",
    "step",
    "tensor",
    "torch_export",
)
load("//tools/ci:tiers.bzl", "NIGHTLY")
load(":decoders.bzl", "DECODERS")
load(":eos_prompts.bzl", "EOS_PROMPTS", "MAX_NEW_TOKENS")

_TEXT = {"hidden_size": 32, "intermediate_size": 64, "max_position_embeddings": 64, "num_attention_heads": 2, "num_hidden_layers": 2, "vocab_size": 100}
_IMAGE = {"image_size": 32, "num_labels": 3}

# name -> task, config, and optionally: inputs (instead of the derived spec), strict export.
ENCODERS = {
    "bert": ("fill-mask", dict(_TEXT, model_type = "bert"), {}),
    "roberta": ("fill-mask", dict(_TEXT, max_position_embeddings = 66, model_type = "roberta", pad_token_id = 1), {}),
    "distilbert": ("text-classification", {"dim": 32, "hidden_dim": 64, "max_position_embeddings": 64, "model_type": "distilbert", "n_heads": 2, "n_layers": 2, "vocab_size": 100}, {}),
    "albert": ("fill-mask", dict(_TEXT, embedding_size = 16, model_type = "albert"), {}),
    "vit": ("image-classification", dict(_TEXT, image_size = 32, model_type = "vit", num_labels = 3, patch_size = 8), {}),
    "deit": ("image-classification", dict(_TEXT, architectures = ["DeiTForImageClassification"], image_size = 32, model_type = "deit", num_labels = 3, patch_size = 8), {}),
    "convnext": ("image-classification", dict(_IMAGE, depths = [1, 1, 1, 1], hidden_sizes = [8, 16, 32, 64], model_type = "convnext"), {}),
    "swin": ("image-classification", dict(_IMAGE, depths = [1, 1], embed_dim = 16, mlp_ratio = 2.0, model_type = "swin", num_heads = [2, 2], patch_size = 4, window_size = 4), {}),
    "mobilevit": ("image-classification", {"expand_ratio": 2.0, "hidden_sizes": [16, 24, 32], "image_size": 64, "model_type": "mobilevit", "neck_hidden_sizes": [8, 8, 16, 16, 24, 32, 64], "num_attention_heads": 2, "num_labels": 3, "patch_size": 2}, {}),
    "detr": (
        "object-detection",
        {
            "backbone_config": {"depths": [1, 1, 1, 1], "embedding_size": 8, "hidden_sizes": [8, 16, 16, 32], "layer_type": "basic", "model_type": "resnet", "out_features": ["stage4"]},
            "d_model": 32,
            "decoder_attention_heads": 2,
            "decoder_ffn_dim": 64,
            "decoder_layers": 1,
            "encoder_attention_heads": 2,
            "encoder_ffn_dim": 64,
            "encoder_layers": 1,
            "model_type": "detr",
            "num_labels": 3,
            "num_queries": 5,
        },
        {"inputs": {"pixel_values": tensor([1, 3, 64, 64])}},
    ),
    "wav2vec2": ("automatic-speech-recognition", dict(_TEXT, conv_dim = [16, 16], conv_kernel = [10, 3], conv_stride = [5, 2], do_stable_layer_norm = False, feat_extract_norm = "group", model_type = "wav2vec2", num_conv_pos_embedding_groups = 2, num_conv_pos_embeddings = 16, vocab_size = 32), {}),
}

# name -> task, config of an encoder-decoder: one program with the methods encoder and decoder
# (one token over a static cache), checked per method and token for token against eager. Their
# weights are drawn wider than transformers' default, so that random models' tokens vary with
# the input instead of repeating one id. T5's end id is one its seeded model reaches (its third
# case ends after 4 tokens): T5's usual 1 is never its greedy choice, and a generation test
# whose texts never end cannot show that the program stops where transformers stops.
SEQ2SEQ = {
    "t5": ("text2text-generation", {"d_ff": 64, "d_kv": 8, "d_model": 32, "decoder_start_token_id": 0, "eos_token_id": 72, "initializer_factor": 20.0, "model_type": "t5", "num_decoder_layers": 2, "num_heads": 4, "num_layers": 2, "pad_token_id": 0, "relative_attention_max_distance": 16, "relative_attention_num_buckets": 8, "vocab_size": 100}),
    "whisper": ("automatic-speech-recognition", {"begin_suppress_tokens": None, "bos_token_id": 1, "d_model": 32, "decoder_attention_heads": 2, "decoder_ffn_dim": 64, "decoder_layers": 2, "decoder_start_token_id": 1, "encoder_attention_heads": 2, "encoder_ffn_dim": 64, "encoder_layers": 2, "eos_token_id": 2, "init_std": 0.5, "max_source_positions": 16, "max_target_positions": 32, "model_type": "whisper", "num_mel_bins": 16, "pad_token_id": 0, "suppress_tokens": None, "vocab_size": 100}),
}

# The rows every `bazel test //...` checks: a text encoder and a speech seq2seq model (CI's 30
# minutes hold no more); //models/hf:vit_pte checks a vision encoder (hf_model, the same task and
# XNNPACK, in the Python, native and arm64 runtimes) in every build, so the table's ViT row is
# breadth. The others are in the nightly tier (tools/ci/tiers.bzl): `bazel test
# //tests/huggingface:table` checks every row, as whoever changes hf_model, the exporter or the
# lock must (docs/huggingface.md).
EVERY_BUILD = ["bert", "whisper"]

def _tags(name):
    return [] if name in EVERY_BUILD else NIGHTLY

_TOKENIZER = "//models/llm:tiny_tokenizer"

# Six decode calls after a one-token prompt, each reading the positions the earlier ones wrote.
_DECODE_CALLS = [step(
    dims = {"seq": 1},
    values = {"input_pos": i},
) for i in range(6)]

def _encoder(name, task, config, options):
    tags = _tags(name)
    hf_model(name = name, config = config, inputs = options.get("inputs"), tags = tags, task = task)
    torch_export(name = name + "_ep", model = ":" + name, tags = tags)
    executorch_program(name = name + "_pte", backends = ["xnnpack"], exported = ":" + name + "_ep", tags = tags)
    numerics_test(name = name + "_numerics_test", program = ":" + name + "_pte", tags = tags)

def _decoder(name, config):
    tags = _tags(name)
    hf_model(name = name, config = config, max_cache_len = 32, tags = tags, task = "text-generation")
    llm_program(name = name + "_llm", max_seq_len = 32, model = ":" + name, strict = True, tags = tags, tokenizer = _TOKENIZER)
    numerics_test(name = name + "_llm_numerics_test", program = ":" + name + "_llm", steps = _DECODE_CALLS, tags = tags)
    llm_generation_test(
        name = name + "_llm_generation_test",
        eos_prompts = [EOS_PROMPTS[name]],
        max_new_tokens = MAX_NEW_TOKENS,
        program = ":" + name + "_llm",
        prompts = ["The runner reads the cache"],
        tags = tags,
        tokenizer = _TOKENIZER,
    )

def _seq2seq(name, task, config):
    tags = _tags(name)  # the row's generation test in BUILD takes the same tags
    hf_model(name = name, config = config, max_cache_len = 16, tags = tags, task = task)
    torch_export(name = name + "_encoder_ep", model = ":" + name + "_encoder", tags = tags)
    torch_export(name = name + "_decoder_ep", model = ":" + name + "_decoder", strict = True, tags = tags)
    executorch_program(
        name = name + "_pte",
        backends = ["xnnpack"],
        methods = {
            "decoder": ":" + name + "_decoder_ep",
            "encoder": ":" + name + "_encoder_ep",
        },
        tags = tags,
    )
    numerics_test(name = name + "_encoder_numerics_test", method = "encoder", program = ":" + name + "_pte", tags = tags)

    # The same encoder states in every call, as in a generation: eager transformers keeps the
    # first call's cross-attention keys (a DynamicCache), the program computes them each call.
    numerics_test(
        name = name + "_decoder_numerics_test",
        program = ":" + name + "_pte",
        steps = [step(
            method = "decoder",
            values = {
                "cache_position": i,
                "encoder_hidden_states": 0.25,
            },
        ) for i in range(4)],
        tags = tags,
    )

# One call per package, like zoo_package(): every target it declares is named after a row.
# buildifier: disable=unnamed-macro
def hf_architectures():
    """Declares every row's targets."""
    for name, (task, config, options) in ENCODERS.items():
        _encoder(name, task, config, options)
    for name, config in DECODERS.items():
        _decoder(name, config)
    for name, (task, config) in SEQ2SEQ.items():
        _seq2seq(name, task, config)
    native.test_suite(
        name = "table",
        # manual: `//...` would otherwise expand the suite, manual rows included.
        tags = ["manual"],
        tests = [":" + t for t in _table_tests()],
    )

def _table_tests():
    """Every row's tests, manual ones included (a test_suite's tests may name them)."""
    tests = [name + "_numerics_test" for name in ENCODERS]
    for name in DECODERS:
        tests += [name + "_llm_numerics_test", name + "_llm_generation_test"]
    for name in SEQ2SEQ:
        tests += [name + "_encoder_numerics_test", name + "_decoder_numerics_test", name + "_generation_test"]
    return tests
