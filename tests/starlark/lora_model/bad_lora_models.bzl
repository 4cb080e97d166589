"""Every bad lora_model fails analysis with one message that names it and the fix: a table of
bad adapters, each declared with its test in one row (bad_target_test_suite)."""

load("//rules:defs.bzl", "lora_model")
load("//tests/starlark:bad_target_test.bzl", "bad_target_test_suite")

POET = "//models/llm:lora/poet.safetensors"

CODER = [
    "//models/llm:lora/coder/adapter_config.json",
    "//models/llm:lora/coder/adapter_model.safetensors",
]

BASE = dict(
    base = "//tests/starlark:double",
    target_modules = ["linear"],
)

# name: the bad adapter (its test is <name>_test); attrs: its lora_model arguments; needles:
# fragments its failure message must hold besides its label.
BAD_LORA_MODELS = [
    struct(
        name = "rank_zero",
        attrs = dict(BASE, alpha = 2, checkpoint = POET, rank = 0),
        needles = ["rank = 0 must be at least 1 (the inner size of the factors lora_a and lora_b)"],
    ),
    struct(
        name = "alpha_zero",
        attrs = dict(BASE, alpha = 0, checkpoint = POET, rank = 4),
        needles = ["alpha = \"0\" must be a number above 0 (the update is scaled by alpha / rank), e.g. 16"],
    ),
    struct(
        name = "alpha_not_a_number",
        attrs = dict(BASE, alpha = "big", checkpoint = POET, rank = 4),
        needles = ["alpha = \"big\" is not a LoRA scale; write a number >= 0, e.g. 2 * rank"],
    ),
    struct(
        name = "no_target_modules",
        attrs = dict(BASE, alpha = 8, checkpoint = POET, rank = 4, target_modules = []),
        needles = ["target_modules = [] must name each linear layer to adapt once, e.g. [\"q_proj\", \"v_proj\"]"],
    ),
    struct(
        name = "repeated_target_module",
        attrs = dict(BASE, alpha = 8, checkpoint = POET, rank = 4, target_modules = ["qkv", "qkv"]),
        needles = ["target_modules = [\"qkv\", \"qkv\"] must name each linear layer to adapt once"],
    ),
    struct(
        name = "no_checkpoint",
        attrs = dict(BASE, alpha = 8, rank = 4),
        needles = ["set checkpoint (the factors' file) or checkpoint_dir (a PEFT folder's files), not neither"],
    ),
    struct(
        name = "checkpoint_and_folder",
        attrs = dict(BASE, alpha = 8, checkpoint = POET, checkpoint_dir = CODER, rank = 4),
        needles = ["set checkpoint (the factors' file) or checkpoint_dir (a PEFT folder's files), not both"],
    ),
    struct(
        name = "folder_in_two_places",
        attrs = dict(BASE, alpha = 8, checkpoint_dir = CODER + [POET], rank = 4),
        needles = ["checkpoint_dir has files in 2 folders (models/llm/lora, models/llm/lora/coder); list the files of one folder"],
    ),
    struct(
        name = "folder_without_factors",
        attrs = dict(BASE, alpha = 8, checkpoint_dir = CODER[:1], rank = 4),
        needles = ["checkpoint_dir has no adapter_model.safetensors (PEFT's file of the factors); set checkpoint to the factors' file instead"],
    ),
    struct(
        name = "adapter_of_an_adapter",
        attrs = dict(BASE, alpha = 8, base = "//tests/starlark:double_lora", checkpoint = POET, rank = 4),
        needles = ["base //tests/starlark:double_lora is itself a lora_model; give the torch_model it adapts"],
    ),
]

def bad_lora_model_test_suite(name):
    """Declares every bad adapter of BAD_LORA_MODELS with its test, and the test_suite `name`."""
    bad_target_test_suite(name, lora_model, BAD_LORA_MODELS)
