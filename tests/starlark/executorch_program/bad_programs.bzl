"""Every bad executorch_program fails analysis with one message that names it and the fix: a
table of bad programs, each declared with its test in one row (bad_target_test_suite)."""

load("//rules:defs.bzl", "coreml", "ethos_u", "executorch_program", "openvino", "tosa")
load("//tests/starlark:bad_target_test.bzl", "bad_target_test_suite")

# name: the bad program (its test is <name>_test); attrs: its executorch_program arguments;
# needles: fragments its failure message must hold besides the program's label.
BAD_PROGRAMS = [
    struct(
        name = "methods_and_exported",
        attrs = dict(exported = "//tests/starlark:plain_ep", methods = {"forward": "//tests/starlark:plain_ep"}),
        needles = ["set exported (one method, forward) or methods (several), not both"],
    ),
    struct(
        name = "empty_methods",
        attrs = dict(methods = {}),
        needles = ["methods is empty; give at least one"],
    ),
    struct(
        name = "method_not_identifier",
        attrs = dict(methods = {"de-code": "//tests/starlark:plain_ep"}),
        needles = ["method name \"de-code\" is not an identifier"],
    ),
    struct(
        name = "metadata_names_a_method",
        attrs = dict(metadata = {"decode": 1}, methods = {"decode": "//tests/starlark:plain_ep", "forward": "//tests/starlark:plain_ep"}),
        needles = ["metadata key \"decode\" has the name of a method", "rename the key"],
    ),
    struct(
        name = "metadata_not_scalar",
        attrs = dict(exported = "//tests/starlark:plain_ep", metadata = {"labels": ["a", "b"]}),
        needles = ["metadata[\"labels\"] is a list of string", "give an int, float, bool, string or a non-empty list of ints"],
    ),
    struct(
        name = "metadata_named_input_schema",
        attrs = dict(exported = "//tests/starlark:plain_ep", metadata = {"input_schema": "mine"}),
        needles = ["metadata key \"input_schema\" has the name of a method"],
    ),
    struct(
        name = "unknown_weights",
        attrs = dict(exported = "//tests/starlark:plain_ep", weights = "outside"),
        needles = ["weights = \"outside\" is not one of [\"inline\", \"external\"]", "use \"external\" for a separate .ptd file"],
    ),
    struct(
        name = "foundation_and_external_weights",
        attrs = dict(backends = [], exported = "//tests/starlark:double_ep", foundation = "//tests/starlark:double_foundation", weights = "external"),
        needles = ["weights = \"external\" and foundation are exclusive: with a foundation, the program's own tensors stay in its .pte and the rest are in //tests/starlark:double_foundation's .ptd; remove weights"],
    ),
    struct(
        name = "foundation_of_other_backends",
        attrs = dict(backends = ["xnnpack"], exported = "//tests/starlark:double_ep", foundation = "//tests/starlark:double_foundation"),
        needles = ["backends [\"xnnpack\"] differ from [] of //tests/starlark:double_external_pte, whose .ptd foundation //tests/starlark:double_foundation shares", "set backends = []"],
    ),
    struct(
        name = "initialized_buffers_not_a_list",
        attrs = dict(exported = "//tests/starlark:plain_ep", initialized_buffers = "k_cache"),
        needles = ["initialized_buffers must be a list of buffer names, e.g. [\"k_cache\"]"],
    ),
    struct(
        name = "unknown_kernels",
        attrs = dict(exported = "//tests/starlark:plain_ep", kernels = "portabel"),
        needles = ["kernels has \"portabel\"; use one of [\"portable\", \"optimized\", \"quantized\"]", "or the label of a kernel list YAML in ExecuTorch's functions.yaml format, e.g. \":my_ops\""],
    ),
    struct(
        name = "no_kernels",
        attrs = dict(exported = "//tests/starlark:plain_ep", kernels = []),
        needles = ["kernels is empty; name the kernel library the app links, e.g. kernels = \"portable\""],
    ),
    # Backends per method: exactly the program's methods, each list of known backends.
    struct(
        name = "backends_miss_a_method",
        attrs = dict(backends = {"forward": ["xnnpack"]}, methods = {"decode": "//tests/starlark:plain_ep", "forward": "//tests/starlark:plain_ep"}),
        needles = ["backends names methods [\"forward\"] but the program has [\"decode\", \"forward\"]", "give one list per method, e.g. {\"decode\": [], \"forward\": [\"xnnpack\"]}"],
    ),
    struct(
        name = "backends_name_an_unknown_method",
        attrs = dict(backends = {"batched": [], "forward": ["xnnpack"]}, exported = "//tests/starlark:plain_ep"),
        needles = ["backends names methods [\"batched\", \"forward\"] but the program has [\"forward\"]"],
    ),
    struct(
        name = "method_backend_unknown",
        attrs = dict(backends = {"forward": ["vulkan"]}, exported = "//tests/starlark:plain_ep"),
        needles = ["backends has \"vulkan\"; use one of [\"xnnpack\", \"openvino\", \"coreml\", \"tosa\", \"ethos_u\"] (or [] for the portable runtime)"],
    ),
    # Backends as values (docs/backends.md): an unknown backend, option or value lists the allowed ones.
    struct(
        name = "backend_unknown",
        attrs = dict(backends = ["openvno"], exported = "//tests/starlark:plain_ep"),
        needles = ["backends has \"openvno\"; use one of [\"xnnpack\", \"openvino\", \"coreml\", \"tosa\", \"ethos_u\"] (or [] for the portable runtime)"],
    ),
    struct(
        name = "backend_option_unknown",
        attrs = dict(backends = [coreml(precison = "fp32")], exported = "//tests/starlark:plain_ep"),
        needles = ["backend coreml has no option \"precison\"; its options are [\"compute_units\", \"minimum_deployment_target\", \"precision\"]"],
    ),
    struct(
        name = "backend_option_value",
        attrs = dict(backends = [openvino(device = "TPU")], exported = "//tests/starlark:plain_ep"),
        needles = ["openvino(device = \"TPU\") is not allowed; use one of [\"CPU\", \"GPU\", \"NPU\"]"],
    ),
    struct(
        name = "backend_options_differ_by_method",
        attrs = dict(
            backends = {"decode": [coreml(precision = "fp32")], "forward": [coreml()]},
            methods = {"decode": "//tests/starlark:plain_ep", "forward": "//tests/starlark:plain_ep"},
        ),
        needles = ["backend coreml has options", "a program takes one set of options per backend"],
    ),
    struct(
        name = "external_weights_openvino",
        attrs = dict(backends = [openvino()], exported = "//tests/starlark:plain_ep", weights = "external"),
        needles = ["weights = \"external\" cannot move openvino's weights to a .ptd: openvino compiles them into its delegate blob in the .pte; set weights = \"inline\""],
    ),
    struct(
        name = "external_weights_coreml",
        attrs = dict(
            backends = {"decode": [coreml()], "forward": ["xnnpack"]},
            methods = {"decode": "//tests/starlark:plain_ep", "forward": "//tests/starlark:plain_ep"},
            weights = "external",
        ),
        needles = ["weights = \"external\" cannot move coreml's weights to a .ptd", "set weights = \"inline\""],
    ),
    # Arm's backends (docs/backends.md, "Arm"): each option's message lists the allowed values.
    struct(
        name = "tosa_profile",
        attrs = dict(backends = [tosa(profile = "BF16")], exported = "//tests/starlark:plain_ep"),
        needles = ["tosa(profile = \"BF16\") is not allowed; use one of [\"FP\", \"INT\"]"],
    ),
    struct(
        name = "ethos_u_target",
        attrs = dict(backends = [ethos_u(target = "ethos-u65-256")], exported = "//tests/starlark:plain_ep"),
        needles = ["ethos_u(target = \"ethos-u65-256\") is not allowed; use one of [\"ethos-u55-128\", \"ethos-u55-32\", \"ethos-u55-64\", \"ethos-u55-256\", \"ethos-u85-128\", \"ethos-u85-256\", \"ethos-u85-512\", \"ethos-u85-1024\", \"ethos-u85-2048\"]"],
    ),
    struct(
        name = "ethos_u_system_config",
        attrs = dict(backends = [ethos_u(system_config = "Ethos_U65_High_End")], exported = "//tests/starlark:plain_ep"),
        needles = ["ethos_u(system_config = \"Ethos_U65_High_End\") is not allowed; use one of [\"default\", \"Ethos_U55_High_End_Embedded\", \"Ethos_U55_Deep_Embedded\", \"Ethos_U85_SYS_DRAM_Low\""],
    ),
    struct(
        name = "ethos_u_memory_mode",
        attrs = dict(backends = [ethos_u(memory_mode = "Shared")], exported = "//tests/starlark:plain_ep"),
        needles = ["ethos_u(memory_mode = \"Shared\") is not allowed; use one of [\"default\", \"Shared_Sram\", \"Sram_Only\", \"Dedicated_Sram\""],
    ),
    struct(
        name = "ethos_u_other_npu_config",
        attrs = dict(backends = [ethos_u(system_config = "Ethos_U85_SYS_DRAM_Mid")], exported = "//tests/starlark:plain_ep"),
        needles = ["ethos_u(system_config = \"Ethos_U85_SYS_DRAM_Mid\") is for another NPU than target \"ethos-u55-128\"; use one of [\"Ethos_U55_High_End_Embedded\", \"Ethos_U55_Deep_Embedded\"] or \"default\""],
    ),
    struct(
        name = "ethos_u55_dedicated_sram",
        attrs = dict(backends = [ethos_u(memory_mode = "Dedicated_Sram")], exported = "//tests/starlark:plain_ep"),
        needles = ["ethos_u(memory_mode = \"Dedicated_Sram\") needs an NPU with SRAM of its own, which an Ethos-U55 has not; use \"Shared_Sram\", \"Sram_Only\" or \"default\""],
    ),
    struct(
        name = "ethos_u_option_name",
        attrs = dict(backends = [ethos_u(npu = "ethos-u55-128")], exported = "//tests/starlark:plain_ep"),
        needles = ["backend ethos_u has no option \"npu\"; its options are [\"memory_mode\", \"system_config\", \"target\"]"],
    ),
    struct(
        name = "ethos_u_float",
        attrs = dict(backends = [ethos_u()], exported = "//tests/starlark:plain_ep"),
        needles = ["method forward comes from //tests/starlark:plain_ep, which is not quantized, and ethos_u runs integer operators only; quantize it with torch_quantize(quantizer = \"ethos_u\") and lower that"],
    ),
    # TOSA's INT profile runs integer operators only, as Ethos-U does: a float program fails at
    # analysis too (before, only its lowering action refused it).
    struct(
        name = "tosa_int_float",
        attrs = dict(backends = [tosa(profile = "INT")], exported = "//tests/starlark:plain_ep"),
        needles = ["method forward comes from //tests/starlark:plain_ep, which is not quantized, and tosa(profile = \"INT\") runs integer operators only; quantize it with torch_quantize(quantizer = \"tosa\") and lower that"],
    ),
    struct(
        name = "external_weights_tosa",
        attrs = dict(backends = [tosa()], exported = "//tests/starlark:plain_ep", weights = "external"),
        needles = ["weights = \"external\" cannot move tosa's weights to a .ptd: tosa compiles them into its delegate blob in the .pte"],
    ),
    struct(
        name = "tosa_dynamic_dims",
        attrs = dict(backends = [tosa()], exported = "//tests/starlark:rows_ep"),
        needles = ["method forward is lowered for tosa, which takes static shapes only, but its export's shape spec //tests/starlark:s_rows has dynamic dims [\"n\"]"],
    ),
    # OpenVINO takes static shapes only: a dynamic dim would fail its lowering or give the
    # largest size's output (docs/backends.md).
    struct(
        name = "openvino_dynamic_dims",
        attrs = dict(backends = [openvino()], exported = "//tests/starlark:rows_ep"),
        needles = ["method forward is lowered for openvino, which takes static shapes only, but its export's shape spec //tests/starlark:s_rows has dynamic dims [\"n\"]; export it with a shape_spec of fixed sizes (no dims)"],
    ),
]

def bad_program_test_suite(name):
    """Declares every bad program of BAD_PROGRAMS with its test, and the test_suite `name`."""
    bad_target_test_suite(name, executorch_program, BAD_PROGRAMS)
