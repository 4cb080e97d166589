"""The backends a program may be lowered for, their options, their packages and where they run.

One value per backend: `"xnnpack"`, or a backend with options, which the rules write as the
backend's name followed by its options as JSON (`openvino{"device":"CPU","precision":"f32"}`;
rules/private/backends.bzl, from the helpers `openvino(...)` and `coreml(...)` of defs.bzl). The
rules check names and options at analysis against BACKENDS and OPTIONS (exporter_facts.bzl), and
write every option of a backend that has options, defaults filled in, into the lowering's config
(actions/registry.py's BackendOptions). Importing this module imports no torch.
"""

import dataclasses
import typing
from typing import Literal

# Every backend `backends` takes, in the order the docs list them.
BACKENDS = ("xnnpack", "openvino", "coreml", "tosa", "ethos_u")

# The Python distributions a backend lowers with, beyond ExecuTorch: the manifest of a program
# that uses the backend records their versions. XNNPACK's are ExecuTorch's own.
PACKAGES = {
    "xnnpack": (),
    "openvino": ("openvino", "nncf"),
    "coreml": ("coremltools",),
    "tosa": ("tosa-tools",),
    "ethos_u": ("tosa-tools", "ethos-u-vela"),
}

# The id ExecuTorch gives each backend's delegates in a .pte (a delegate's `id`, a partition's
# `backend_id`): the name pte_inspect, the report and a budget's figures show.
DELEGATE_IDS = {"xnnpack": "XnnpackBackend", "openvino": "OpenvinoBackend", "coreml": "CoreMLBackend",
                "tosa": "TOSABackend", "ethos_u": "EthosUBackend"}

# Backends whose packages are not in the toolchain's lock, by the repository that holds them
# (`torch_export_backend_<value>`, toolchain/backend_packages.bzl): Bazel fetches it only when a
# target names the backend. TOSA and Ethos-U share Arm's (tosa-tools, ethos-u-vela).
OWN_LOCK = {"openvino": "openvino", "tosa": "arm", "ethos_u": "arm"}

# Where a program of each backend runs on this machine kind (x86-64 Linux): the numerics_test
# runtimes it can take. The native runner links the wheel's OpenVINO backend, which loads
# OpenVINO's runtime from the backend's packages when a program needs it. Core ML programs run
# on Apple hardware only, Ethos-U programs on the NPU (a board or Arm's Corstone FVP), and
# ExecuTorch's runtimes have no TOSA backend.
RUNTIMES = {
    "xnnpack": ("python", "native", "arm64"),
    "openvino": ("python", "native"),  # no arm64: OpenVINO's packages here are for x86-64
    "coreml": (),
    "tosa": (),
    "ethos_u": (),
}

# The runtimes of the portable runtime alone (backends = []).
PORTABLE_RUNTIMES = ("python", "native", "arm64")


@dataclasses.dataclass(frozen=True)
class OpenvinoOptions:
    """openvino(...): OpenVINO's device and its inference precision hint (INFERENCE_PRECISION_HINT):
    f32 keeps the error at XNNPACK's order on every CPU, where a CPU with bf16 units would
    otherwise compute in bf16 (docs/backends.md). Each Literal lists the default first."""

    device: Literal["CPU", "GPU", "NPU"] = "CPU"
    precision: Literal["f32", "bf16", "f16"] = "f32"


@dataclasses.dataclass(frozen=True)
class CoremlOptions:
    """coreml(...): coremltools' ComputeUnit (lower case), compute precision and ct.target."""

    compute_units: Literal["all", "cpu_only", "cpu_and_gpu", "cpu_and_ne"] = "all"
    precision: Literal["fp16", "fp32"] = "fp16"
    minimum_deployment_target: Literal["iOS17", "iOS15", "iOS16", "iOS18", "iOS26"] = "iOS17"


@dataclasses.dataclass(frozen=True)
class TosaOptions:
    """tosa(...): the TOSA 1.0 profile, floating point (FP) or integer (INT, a quantized model)."""

    profile: Literal["FP", "INT"] = "FP"


@dataclasses.dataclass(frozen=True)
class EthosUOptions:
    """ethos_u(...): the NPU and its MAC count, and Vela's system config and memory mode for the
    U55 and U85 (its Arm/vela.ini). "default" leaves them to ExecuTorch's EthosUCompileSpec, which
    picks one per NPU family (U55: Ethos_U55_High_End_Embedded, Shared_Sram; U85:
    Ethos_U85_SYS_DRAM_Mid, Sram_Only)."""

    target: Literal["ethos-u55-128", "ethos-u55-32", "ethos-u55-64", "ethos-u55-256", "ethos-u85-128",
                    "ethos-u85-256", "ethos-u85-512", "ethos-u85-1024", "ethos-u85-2048"] = "ethos-u55-128"
    system_config: Literal["default", "Ethos_U55_High_End_Embedded", "Ethos_U55_Deep_Embedded",
                           "Ethos_U85_SYS_DRAM_Low", "Ethos_U85_SYS_DRAM_Mid", "Ethos_U85_SYS_DRAM_High",
                           "Ethos_U85_SYS_Flash_Low", "Ethos_U85_SYS_Flash_High"] = "default"
    memory_mode: Literal["default", "Shared_Sram", "Sram_Only", "Dedicated_Sram", "Dedicated_Sram_256KB",
                         "Dedicated_Sram_384KB", "Dedicated_Sram_512KB"] = "default"


# {backend: its options' class}; a backend without options takes its name alone.
OPTION_CLASSES = {"openvino": OpenvinoOptions, "coreml": CoremlOptions, "tosa": TosaOptions,
                  "ethos_u": EthosUOptions}


def _option_values(cls):
    hints = typing.get_type_hints(cls)
    return {f.name: typing.get_args(hints[f.name]) for f in dataclasses.fields(cls)}


# {backend: {option: allowed values, the default first}}, for the rules' checks.
OPTIONS = {backend: _option_values(OPTION_CLASSES[backend]) if backend in OPTION_CLASSES else {}
           for backend in BACKENDS}


def runtimes_of(backends):
    """The runtimes every one of `backends` runs in (all of them for the portable runtime)."""
    allowed = set(PORTABLE_RUNTIMES)
    for backend in backends:
        allowed &= set(RUNTIMES.get(backend, ()))
    return tuple(r for r in PORTABLE_RUNTIMES if r in allowed)


@dataclasses.dataclass(frozen=True)
class BackendOptions:
    """A lowering config's "backend_options": each backend with options that the program uses,
    every option given (the rules fill in the defaults). The key is absent for programs that
    use only backends without options, so their configs keep their bytes."""

    openvino: OpenvinoOptions | None = None
    coreml: CoremlOptions | None = None
    tosa: TosaOptions | None = None
    ethos_u: EthosUOptions | None = None

