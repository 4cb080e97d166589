"""The one contract every check keeps, and each test runner's config: the JSON file its test rule
writes, as a typed object (read by its type hints, core/typed_json.py).

A check is a module with

    run(config) -> (ok, report)     config: its class below; report: the text to print
    main(argv)                      the test's entry: main(argv, <its config class>, run) below

Paths in the configs are runfiles-relative: a test runs from its runfiles root. The rules that
write them: numerics_test (NumericsConfig, steps included), graph_snapshot_test
(SnapshotConfig), program_budget_test (BudgetConfig, "kind": "budget"), bundled_program_test
(BundledCasesConfig), foundation_budget_test (SharedBudgetConfig), delegate_structure_test
(DelegateStructureConfig).
"""

import dataclasses
import json
import os
import sys
import typing

from exporter.actions.registry import ModelConfig, NumericsCases
from exporter.core.typed_json import Config, inline


# A quantized program with no floor or tolerance set: int8 rounding bounds a single layer's
# SQNR near 40 dB; a deep network loses some, and 20 dB (noise at a tenth of the signal's
# amplitude) still separates a working program from a broken one (docs/quantization.md).
DEFAULT_QUANTIZED_SQNR_DB = 20.0

# A float program whose backend's runtime computes in bf16 or f16 on this CPU (OpenVINO on a CPU
# with bf16 units: docs/backends.md), with no floor or tolerance set: 8 significant bits put one
# rounding near 50 dB, and the zoo's four OpenVINO programs measured 42.4 to 53.6 dB in bf16 on an
# AMD EPYC (Zen 4); 30 dB leaves room for deeper models, and a wrong operator falls far below it.
DEFAULT_REDUCED_PRECISION_SQNR_DB = 30.0

# Every exporter module that a test rule or a `bazel run` target of the rules runs, by the name
# the rules know it by (exporter_facts.bzl's EXPORTER_MODULES): a module that moves in exporter/
# changes this table only.
MODULES = {
    "benchmark": "exporter.checks.benchmark",  # executorch_benchmark
    "budget": "exporter.checks.budget",  # program_budget_test
    "delegate_structure": "exporter.checks.delegate_structure",  # delegate_structure_test
    "bundled_cases": "exporter.checks.bundled_cases",  # bundled_program_test
    "generation": "exporter.checks.generation",  # llm_generation_test
    "golden": "exporter.checks.golden",  # graph_snapshot_test, and every golden's .update
    "multimodal_generation": "exporter.checks.multimodal_generation",  # multimodal_generation_test
    "numerics": "exporter.checks.numerics",  # numerics_test
    "profile": "exporter.checks.profile",  # executorch_benchmark's <name>.profile
    "pte_inspect": "exporter.formats.pte_inspect",  # pte_inspect
    "seq2seq": "exporter.checks.seq2seq",  # seq2seq_generation_test
    "shared_budget": "exporter.checks.shared_budget",  # foundation_budget_test
    "steps": "exporter.checks.steps",  # numerics_test(steps = [...])
}


@dataclasses.dataclass(frozen=True)
class RunfilesModelConfig(ModelConfig):
    """A model as a test reads it: its import roots, runfiles-relative in the JSON, made absolute
    from the test's working directory (its runfiles root)."""

    def __post_init__(self):
        object.__setattr__(self, "import_roots", tuple(os.path.abspath(r) for r in self.import_roots))


@dataclasses.dataclass(frozen=True)
class Tolerances(Config):
    """rtol and atol as the test sets them; None takes the default of the program's backends
    (numerics.default_tolerances: each backend's record has its own)."""

    rtol: float | None = None
    atol: float | None = None

    @property
    def set(self):
        return self.rtol is not None or self.atol is not None


@dataclasses.dataclass(frozen=True)
class ExportedMethod(Config):
    """One method's exported program: its torch_export, .pt2 and shape spec."""

    pt2: str
    exported_label: str | None = None
    spec: dict | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class CheckConfig(Config):
    """The field every check's config has: the test's label, for messages."""

    label: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class NumericsConfig(CheckConfig, NumericsCases):
    """numerics_test: a program's method in the ExecuTorch runtime against a reference. Its fields
    are NumericsCases' (actions/registry.py: the program, the method, the reference, the cases, the
    runtimes), with runfiles paths, and:

    program               the executorch_program's label
    model                 RunfilesModelConfig of the eager model, or None
    backends, quantized   the program's backends; whether its export was quantized
    tolerances, min_sqnr_db, min_top1_agreement   how outputs are judged (numerics.Checks)
    method_programs       numerics_test(steps = ...): each method's ExportedMethod; {} otherwise
    program_files         {output group: path} of the program's files a reference runtime reads
                          (core/backends.py's ReferenceRuntime)
    fvp_runner, fvp_runner_label   with "fvp": a team's Corstone FVP runner (et_runner's command line)
    native_runner, native_runner_label   the native runner's path and label
    arm64_runner          with "arm64": the launcher of native_runner built for aarch64 (qemu)
    values, values_data   the values the test compares, <name>.values.json and .etvals, which
                          its build action computes (actions/numerics_values.py); None: the
                          test computes them itself (a run outside Bazel)
    release, program_release   the ExecuTorch release whose runtimes run the program, and the one
                          it was lowered for (core/releases.py); None outside Bazel
    """

    program: str
    model: RunfilesModelConfig | None = None
    backends: tuple[str, ...] = ()
    quantized: bool = False
    tolerances: Tolerances = inline()
    min_sqnr_db: float | None = None
    min_top1_agreement: float | None = None
    method_programs: dict[str, ExportedMethod] = dataclasses.field(default_factory=dict)
    program_files: dict[str, str] = dataclasses.field(default_factory=dict)
    fvp_runner: str | None = None
    fvp_runner_label: str | None = None
    native_runner: str | None = None
    native_runner_label: str | None = None
    arm64_runner: str | None = None
    values: str | None = None
    values_data: str | None = None
    release: str | None = None
    program_release: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class SnapshotConfig(CheckConfig):
    """graph_snapshot_test: the text of a .pt2 (and of a .pte's plan) against a golden file.

    subject           the torch_export or executorch_program the golden shows
    pt2, pte, spec    its .pt2, its .pte or None, and the export's shape spec (names symbols)
    golden            the golden's workspace-relative path
    update_target     the `bazel run` target that rewrites the golden
    dot, dot_version  graphviz's launcher and version file, which draw a failing test's graphs
                      side by side (snapshot_diff.py); None: the text diff only
    text              the text itself, which the test's build action renders
                      (actions/snapshot_text.py); None: the test renders it (torch imports then)
    """

    subject: str
    pt2: str
    golden: str
    update_target: str
    pte: str | None = None
    spec: dict | None = None
    dot: str | None = None
    dot_version: str | None = None
    text: str | None = None
    kind = "snapshot"


@dataclasses.dataclass(frozen=True)
class Limits(Config):
    """A program_budget_test's limits in bytes, and on Vela's figures of a program Vela compiled
    (the manifest's "vela" totals); None for no limit."""

    pte_bytes: int | None = None
    ptd_bytes: int | None = None
    planned_bytes: dict[str, int] = dataclasses.field(default_factory=dict)  # {method: bytes}
    delegate_bytes: dict[str, int] = dataclasses.field(default_factory=dict)  # {backend: bytes}
    sram_bytes: int | None = None
    flash_bytes: int | None = None
    min_npu_fraction: float | None = None  # of the operators Vela compiled, on the NPU
    estimated_ms: float | None = None  # Vela's estimate at the system config
    instructions: dict[str, int] = dataclasses.field(default_factory=dict)  # {method: one call's}


@dataclasses.dataclass(frozen=True, kw_only=True)
class BudgetConfig(CheckConfig):
    """program_budget_test: a program's sizes against its limits and its golden.

    program, manifest, pte, ptd   the executorch_program, its manifest, .pte and .ptd or None
    methods           the program's methods (each one's planned memory is a figure)
    limits            Limits
    max_growth_percent   how much a figure may grow over the golden's; None: any
    golden, update_target   the golden's workspace-relative path (or None) and its `bazel run` target
    instructions      the counts of the test's InstructionCount action (actions/instructions.py),
                      or None without max_instructions
    """

    program: str
    manifest: str
    pte: str
    update_target: str
    ptd: str | None = None
    methods: tuple[str, ...] = ()
    limits: Limits = dataclasses.field(default_factory=Limits)
    max_growth_percent: float | None = None
    golden: str | None = None
    instructions: str | None = None
    kind: typing.Literal["budget"] = "budget"  # golden_config tells a budget's config by it


@dataclasses.dataclass(frozen=True, kw_only=True)
class BundledCasesConfig(CheckConfig):
    """bundled_program_test: a .bpte's bundled cases in the ExecuTorch runtime.

    bundle, bpte, manifest   the bundled_program, its .bpte and manifest
    backends                 the program's backends (the tolerances' defaults)
    ptd                      the program's .ptd (weights = "external"), or None
    """

    bundle: str
    bpte: str
    manifest: str
    backends: tuple[str, ...] = ()
    tolerances: Tolerances = inline()
    ptd: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class DelegateStructureConfig(CheckConfig):
    """delegate_structure_test: a program's delegates, read by their backend's reader without running them.

    program, pte   the executorch_program and its .pte
    """

    program: str
    pte: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class GenerationTestConfig(CheckConfig):
    """llm_generation_test: an llm_program's greedy generation in ExecuTorch's runners.

    program, pte, ptd      the llm_program, its .pte and its .ptd or None
    tokenizer              {"label", "file", "manifest", "format"} of its tokenizer
    model                  RunfilesModelConfig of the eager model (the program's)
    manifest               the program's .pte.json (its constant methods: get_max_context_len)
    prompts, max_new_tokens   what to generate
    eos_prompts            prompts whose text must end at an end id before max_new_tokens
    native_runner, native_runner_label   the native runner's path (None: it does not generate)
                           and label
    arm64_runner           the launcher of the native runner built for aarch64 (qemu), or None
    backend_packages       identity files of the backends' package repositories
    release, program_release   the ExecuTorch release whose runtimes generate, and the one the
                           program was lowered for (core/releases.py); None: the test names none
    executorch_layer       that release's identity.txt, whose packages go first on the import path
                           (core/release_site.py); None for the toolchain's own release
    quantized              {quantize, group_size, embedding_quantize} as the program's export had
                           them (torch_export's): its eager model is quantized the same way
    runtime_python         the launcher of the venv of the release's runtimes, when they need
                           another torch (1.3's): forward runs there, called token by token
                           (core/runtime_process.py), instead of in the LLM runner; else None
    """

    program: str
    pte: str
    tokenizer: dict
    model: RunfilesModelConfig
    manifest: str
    prompts: tuple[str, ...]
    max_new_tokens: int
    native_runner_label: str
    eos_prompts: tuple[str, ...] = ()
    native_runner: str | None = None
    ptd: str | None = None
    arm64_runner: str | None = None
    backend_packages: tuple[str, ...] = ()
    release: str | None = None
    program_release: str | None = None
    executorch_layer: str | None = None
    quantized: dict = dataclasses.field(default_factory=dict)
    runtime_python: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class MultimodalGenerationConfig(CheckConfig):
    """multimodal_generation_test: a multimodal_program's greedy generation in ExecuTorch's
    MultimodalRunner, from each image with each prompt.

    program, pte, ptd, manifest, tokenizer   as GenerationTestConfig's
    vision_encoder, token_embedding, text_decoder   RunfilesModelConfig of each method's eager model
    images                 the image files (binary PPM or PGM), as an app reads them
    prompts, max_new_tokens   what to generate
    quantized              {method: {scheme, group_size}} of methods exported with torch_export's
                           quantize: their eager model is quantized the same way
    """

    program: str
    pte: str
    manifest: str
    tokenizer: dict
    vision_encoder: RunfilesModelConfig
    token_embedding: RunfilesModelConfig
    text_decoder: RunfilesModelConfig
    images: tuple[str, ...]
    prompts: tuple[str, ...]
    max_new_tokens: int
    ptd: str | None = None
    quantized: dict[str, dict] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Seq2SeqGenerationConfig(CheckConfig):
    """seq2seq_generation_test: an encoder-decoder program's greedy tokens against eager's.

    program, pte, ptd   the program (methods encoder and decoder), its .pte and .ptd or None
    model               RunfilesModelConfig of the whole eager model (hf_model's <name>)
    encoder_spec        the encoder method's shape spec (the inputs' shapes and dtypes)
    cases               how many seeded inputs; odd ones take each dynamic dim at its max
    max_new_tokens      tokens to generate per input
    eos_cases           the cases (indices) whose text must end at an end id before max_new_tokens
    """

    program: str
    pte: str
    model: RunfilesModelConfig
    encoder_spec: dict
    cases: int = 2
    max_new_tokens: int = 8
    eos_cases: tuple[int, ...] = ()
    ptd: str | None = None


@dataclasses.dataclass(frozen=True)
class SharedPair(Config):
    """A program that shares a foundation (its .pte), and its stand-alone counterpart's files."""

    program: str
    pte: str
    standalone: str
    standalone_files: tuple[str, ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class SharedBudgetConfig(CheckConfig):
    """foundation_budget_test: bytes shipped with a foundation against stand-alone programs.

    foundation, ptd   the foundation_weights and its .ptd
    pairs             SharedPair per program, in the order the test adds them
    max_ratio         the largest shipped / stand-alone ratio that passes
    """

    foundation: str
    ptd: str
    pairs: tuple[SharedPair, ...]
    max_ratio: float


def golden_config(data):
    """The config of a golden (golden.py rewrites both kinds): BudgetConfig or SnapshotConfig."""
    return (BudgetConfig if data.get("kind") == "budget" else SnapshotConfig).from_json(data)


def load(path, config_class):
    """config_class's object from the JSON file at path."""
    with open(path, encoding="utf-8") as f:
        return config_class.from_json(json.load(f))


def main(argv, config_class, run):
    """A check's test entry: run(config of argv[0]); prints the report (stdout if ok, else
    stderr) and returns the exit code. A ValueError (an input the check cannot build) fails the
    test in one line, without a traceback."""
    config = load(argv[0], config_class)
    try:
        ok, report = run(config)
    except ValueError as e:
        ok, report = False, f"{config.label}: {e}\n"
    (sys.stdout if ok else sys.stderr).write(report)
    return 0 if ok else 1
