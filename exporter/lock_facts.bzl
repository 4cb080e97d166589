"""What the exporter's Python defines that the toolchain's WORKSPACE macros use (generated from
exporter/facts.py by `bazel run //exporter:update_exporter_facts`; do not edit by hand;
//exporter:facts_test checks that it is current)."""

BACKEND_LOCKS = {
    "arm": [
        "tosa",
        "ethos_u",
    ],
    "openvino": [
        "openvino",
    ],
}

PER_MACHINE_LOCKS = [
    "openvino",
]

RELEASE_LOCKS = {
    "executorch_1_3": "1.3",
    "executorch_1_4": "1.4",
}

RUNTIME_LOCKS = {
    "executorch_1_3_runtime": "1.3",
}

ARM64_BINDING_LOCKS = {
    "executorch_1_3_runtime": "1.3",
    "executorch_1_4": "1.4",
}
