"""The backends a program may be lowered for: one record each, the one place that names them.

A record says everything the rules, the lowering, the reports and the checks need to know of a
backend: its options, its packages and their lock, its delegate id, where its programs run, what
it takes and keeps, its quantizer, its tolerances and its colour. They read the records and never
a backend's name; `exporter/facts.py` writes the records into exporter_facts.bzl for the rules.
What runs ExecuTorch's own code for a backend (its partitioner, the patches its lowering needs,
its quantizer, what its lowering records) is in its hooks module (backend_hooks/<name>.py beside
exporter/; backend_hooks/__init__.py says what a hooks module holds). CONTRIBUTING.md, "Adding a
backend", says what else a new one needs.

A value of `backends` is a backend's name, or the name followed by its options as JSON
(`openvino{"device":"CPU","precision":"f32"}`; rules/private/backends.bzl). The lowering's config
holds every option of a backend with options, defaults filled in (BackendOptions). Importing this
module imports no torch.
"""

import dataclasses
import typing
from typing import Literal

from exporter.core.errors import UserError

# The numerics_test runtimes of ExecuTorch itself, which run the portable kernels (backends = []).
PORTABLE_RUNTIMES = ("python", "native", "arm64")


@dataclasses.dataclass(frozen=True)
class ReferenceRuntime:
    """A runtime beside ExecuTorch's that runs a backend's delegates in a reference of the backend,
    for numerics_test's `runtimes`.

    title, runs    what it is, and what it runs, for messages
    runner         the module whose run_calls(config, calls) runs the calls (backend_hooks/checks/), or
                   None for a runtime the test reaches through a runner of the team's, numerics_test's
                   <name>_runner
    program_files  output groups of the program it reads (numerics_test passes them by name)
    """

    name: str
    title: str
    runs: str
    runner: str | None = None
    program_files: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Quantizer:
    """A backend's own PT2E quantizer (torch_quantize's `quantizer`, named as the backend).

    schemes       the schemes it takes, its default first (actions/quantize.py's SCHEMES)
    binds         a program it quantized lowers only for this backend (XNNPACK's lowers anywhere)
    fold_weights  convert_pt2e folds the quantized weights into int8 constants
    check_guards  the module it prepares keeps torch.export's guards as a call_module
    """

    schemes: tuple[str, ...]
    binds: bool = True
    fold_weights: bool = True
    check_guards: bool = True


@dataclasses.dataclass(frozen=True)
class Backend:
    """One backend. Field by field, what it is and who reads it:

    name, title        the value `backends` takes, and the name messages and reports give it
    hooks              its hooks module (backend_hooks/<name>.py by default)
    delegate_id        the id ExecuTorch gives its delegates in a .pte (pte_inspect, the report,
                       budgets); None for a backend that delegates nothing
    colour             its delegates' colour in reports (reports/graph_dot.py)
    options            its options' dataclass: each field a Literal of the allowed values, the
                       default first; None for a backend that takes none
    packages           the distributions it lowers with beyond ExecuTorch, whose versions the
                       manifest records
    lock               the lock of its packages beside the toolchain's (toolchain/backends/
                       <lock>.lock, the repository torch_export_backend_<lock>), None for none
    runtimes           the numerics_test runtimes that run its programs on this machine kind
    reference_runtimes runtimes that run its delegates in a reference of the backend
    runs_on            (where its programs run, what to test them on) when no runtime here does
    per_machine        its compiled code is for the CPU that lowered it: no remote cache or executor
    weights_in_blob    it compiles the weights into its delegate blob, so none go to a .ptd
    static_shapes      its lowering takes static shapes only
    integer_only       it runs integer operators only: True, or {option: value} when it does so
                       only with that option (a float program fails at analysis and in the action)
    tolerances         (rtol, atol): numerics_test's defaults for its float programs
    quantizer          its own PT2E quantizer, or None
    outputs            {output group: file suffix} its lowering writes beside the .pte
    runtime_library    (environment variable, file pattern under its packages' folder): how
                       ExecuTorch's runtimes find the backend's C library, or None
    structure_check    the module of delegate_structure_test's reader of its delegates
                       (backend_hooks/checks/), or None
    precision_check    the module (backend_hooks/checks/) whose runtime_precision() names the
                       float precision its runtime computes in on this machine ("f32", "bf16",
                       "f16"), for a backend whose runtime picks it by CPU; or None
    vela_figures       its lowering records Vela's figures (the manifest's "vela"), which
                       program_budget_test's max_sram_bytes and the like bound
    """

    name: str
    title: str
    delegate_id: str | None
    colour: str | None = None
    options: type | None = None
    packages: tuple[str, ...] = ()
    lock: str | None = None
    runtimes: tuple[str, ...] = ()
    reference_runtimes: tuple[ReferenceRuntime, ...] = ()
    runs_on: tuple[str, str] | None = None
    per_machine: bool = False
    weights_in_blob: bool = False
    static_shapes: bool = False
    integer_only: bool | dict[str, str] = False
    tolerances: tuple[float, float] = (1e-3, 1e-4)
    quantizer: Quantizer | None = None
    outputs: dict[str, str] = dataclasses.field(default_factory=dict)
    runtime_library: tuple[str, str] | None = None
    structure_check: str | None = None
    precision_check: str | None = None
    vela_figures: bool = False
    hooks: str = ""

    def __post_init__(self):
        if not self.hooks:
            object.__setattr__(self, "hooks", f"backend_hooks.{self.name}")

    def integer_only_with(self, options):
        """Whether a program lowered for this backend with `options` (its options' dataclass, or
        None for the defaults) runs integer operators only."""
        if isinstance(self.integer_only, bool):
            return self.integer_only
        chosen = options if options is not None else self.options() if self.options else None
        return all(getattr(chosen, key, None) == value for key, value in self.integer_only.items())


@dataclasses.dataclass(frozen=True)
class OpenvinoOptions:
    """openvino(...): OpenVINO's device and the inference precision hint (INFERENCE_PRECISION_HINT)
    its lowering compiles with. ExecuTorch's runtime imports the program without the hint, so on a
    CPU with bf16 units it computes in bf16 whatever the hint (docs/backends.md). Each Literal lists
    the default first."""

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


# The TOSA reference model (tosa-tools) runs a TOSA program's graph, or the INT TOSA graph Vela
# compiled an Ethos-U delegate from (the lowering's <name>.vela_tosa.json), and the quantize and
# dequantize operators around it. Arm's Corstone FVP runs an Ethos-U program's command stream
# through a runner a team names (numerics_test's fvp_runner); no FVP is on this machine.
TOSA_REFERENCE = ReferenceRuntime("tosa_reference", "the TOSA reference model", "a TOSA program's graph",
                                  runner="backend_hooks.checks.tosa_reference", program_files=("vela_tosa",))
FVP = ReferenceRuntime("fvp", "Arm's Corstone FVP", "an Ethos-U program on Arm's Corstone FVP")

# Arm's quantizers take static schemes only: the NPU and TOSA's INT profile have no dynamic
# quantization. They run ExecuTorch passes over the module, which stop at any call_module node,
# so the module they prepare has no guards (measured: a model with a mean failed in
# DecomposeMeanDimPass, "call_module is not supported"; the re-export checks shapes anyway).
_ARM_QUANTIZER = Quantizer(("int8_static_per_channel", "int8_static_per_tensor"), check_guards=False)

# Every backend `backends` takes, in the order messages and the docs list them. What was
# measured is said beside the record.
RECORDS = (
    Backend(
        "xnnpack", "XNNPACK", delegate_id="XnnpackBackend", colour="#2563eb",
        runtimes=PORTABLE_RUNTIMES,
        quantizer=Quantizer(("int8_static_per_channel", "int8_static_per_tensor", "int8_dynamic_per_channel",
                             "int4_dynamic_per_channel"), binds=False),
    ),
    Backend(
        # Its blob carries the lowering CPU's best instruction set and loads only on a CPU with
        # the same (docs/caching.md, "Per-machine programs"). Its compile types each input from
        # an example value, and a dynamic size reaches it as a SymInt, which has no type. The
        # native runner links the wheel's OpenVINO backend, which loads OpenVINO's runtime from
        # the backend's packages; those are for x86-64 here, so no arm64.
        "openvino", "OpenVINO", delegate_id="OpenvinoBackend", colour="#0891b2",
        options=OpenvinoOptions, packages=("openvino", "nncf"), lock="openvino", runtimes=("python", "native"),
        per_machine=True, weights_in_blob=True, static_shapes=True,
        runtime_library=("OPENVINO_LIB_PATH", "openvino/libs/libopenvino_c.so*"),
        precision_check="backend_hooks.checks.openvino_precision",
        # nncf's quantizer keeps float weights with a quantize/dequantize pair after them:
        # OpenVINO's frontend converts such pairs, but not int8 weights folded into constants
        # (measured: the lowering fails with "Arguments do not have the same element type").
        quantizer=Quantizer(("int8_static_per_channel",), fold_weights=False),
    ),
    Backend(
        "coreml", "Core ML", delegate_id="CoreMLBackend", colour="#c026d3",
        options=CoremlOptions, packages=("coremltools",), runs_on=("Apple hardware", "a Mac or an iPhone"),
        weights_in_blob=True, structure_check="backend_hooks.checks.coreml_structure",
    ),
    Backend(
        # Its blob is the TOSA graph with its constants (measured: the lowering leaves no named
        # data); Arm's lowering fails on a dynamic batch in one of its graph passes.
        "tosa", "TOSA", delegate_id="TOSABackend", colour="#7c3aed",
        options=TosaOptions, packages=("tosa-tools",), lock="arm", reference_runtimes=(TOSA_REFERENCE,),
        runs_on=("a TOSA device", "a TOSA device"), weights_in_blob=True, static_shapes=True,
        integer_only={"profile": "INT"}, quantizer=_ARM_QUANTIZER,
    ),
    Backend(
        # Vela's command stream with the weights it packed for the NPU, which runs integer
        # operators only: its partitioner would leave every float operator on the CPU, silently.
        "ethos_u", "Ethos-U", delegate_id="EthosUBackend", colour="#db2777",
        options=EthosUOptions, packages=("tosa-tools", "ethos-u-vela"), lock="arm",
        reference_runtimes=(TOSA_REFERENCE, FVP), runs_on=("an Ethos-U NPU", "a board or Arm's Corstone FVP"),
        weights_in_blob=True, static_shapes=True, integer_only=True, quantizer=_ARM_QUANTIZER,
        outputs={"vela": ".vela.json", "vela_tosa": ".vela_tosa.json"}, vela_figures=True,
    ),
)

BY_NAME = {record.name: record for record in RECORDS}
BACKENDS = tuple(BY_NAME)
REFERENCE_RUNTIMES = {r.name: r for record in BY_NAME.values() for r in record.reference_runtimes}


def record(name):
    """The record of backend `name`; UserError for a name no record has (the rules check names at
    analysis; this guards the command line)."""
    if name not in BY_NAME:
        raise UserError(f"unknown backend {name!r}; `backends` takes {list(BACKENDS)} or []")
    return BY_NAME[name]


def _option_values(cls):
    hints = typing.get_type_hints(cls)
    return {f.name: typing.get_args(hints[f.name]) for f in dataclasses.fields(cls)}


# {backend: {option: allowed values, the default first}}, for the rules' checks.
OPTIONS = {name: _option_values(r.options) if r.options else {} for name, r in BY_NAME.items()}

# A lowering config's "backend_options": each backend with options that the program uses, every
# option given (the rules fill in the defaults). The key is absent for programs that use only
# backends without options, so their configs keep their bytes.
if typing.TYPE_CHECKING:  # a class of fields made from the records, which a type checker cannot see

    class BackendOptions:
        def __init__(self, **options: typing.Any) -> None: ...

        def __getattr__(self, name: str) -> typing.Any: ...
else:
    BackendOptions = dataclasses.make_dataclass(
        "BackendOptions", [(name, r.options | None, None) for name, r in BY_NAME.items() if r.options], frozen=True)
    BackendOptions.__module__ = __name__
    BackendOptions.__doc__ = "The options of each backend with options that a program is lowered for; None when not given."


def options_of(backend_options, name):
    """Backend `name`'s options in a lowering's BackendOptions (or None), defaults where none were
    given; None for a backend without options."""
    chosen = getattr(backend_options, name, None) if backend_options is not None else None
    options = BY_NAME[name].options
    return chosen if chosen is not None or options is None else options()
