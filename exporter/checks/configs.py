"""Each test runner's config: the JSON file its test rule writes, as a typed object, and the one
contract every check keeps.

A check is a module with

    run(config) -> (ok, report)     config: its class below; report: the text to print
    main(argv)                      the test's entry: main(argv, <its config class>, run) below

Paths in the configs are runfiles-relative: a test runs from its runfiles root. The rules that
write them: numerics_test (NumericsConfig, steps included), graph_snapshot_test
(SnapshotConfig), program_budget_test (BudgetConfig, "kind": "budget"), bundled_program_test
(BundledCasesConfig).
"""

import dataclasses
import json
import os
import sys

from exporter.actions.configs import ModelConfig


# A quantized program with no floor or tolerance set: int8 rounding bounds a single layer's
# SQNR near 40 dB; a deep network loses some, and 20 dB (noise at a tenth of the signal's
# amplitude) still separates a working program from a broken one (docs/quantization.md).
DEFAULT_QUANTIZED_SQNR_DB = 20.0


def _tuple(values):
    return tuple(values or ())


@dataclasses.dataclass(frozen=True)
class Tolerances:
    """rtol and atol as the test sets them; None takes the default of the program's backends
    (numerics.DEFAULT_TOLERANCES)."""

    rtol: float = None
    atol: float = None

    @classmethod
    def from_json(cls, data):
        return cls(rtol=data.get("rtol"), atol=data.get("atol"))

    @property
    def set(self):
        return self.rtol is not None or self.atol is not None


@dataclasses.dataclass(frozen=True)
class Calibration:
    """The calibration_data a quantized program was calibrated on (no case may feed its batches)."""

    label: str
    batches: str


@dataclasses.dataclass(frozen=True)
class ExportedMethod:
    """One method's exported program: its torch_export, .pt2 and shape spec."""

    exported_label: str
    pt2: str
    spec: dict

    @classmethod
    def from_json(cls, data):
        return cls(exported_label=data.get("exported_label"), pt2=data["pt2"], spec=data.get("spec"))


@dataclasses.dataclass(frozen=True)
class NumericsConfig:
    """numerics_test: a program's method in the ExecuTorch runtime against a reference.

    program, pte, ptd     the executorch_program, its .pte and its .ptd (external weights) or None
    method                the method the cases call
    exported_label, pt2, pt2_manifest, spec   the method's torch_export, its .pt2, manifest, spec
    reference             "eager" (model), "exported" (the .pt2) or "program" (reference_program)
    model                 ModelConfig of the eager model, its import roots made absolute, or None
    reference_program     {"label", "pt2"} of another torch_export, or None
    backends, quantized   the program's backends; whether its export was quantized
    tolerances, min_sqnr_db, min_top1_agreement   how outputs are judged (numerics.Checks)
    calibration           Calibration of a quantized program, or None
    inputs                [{dim: size}]: the cases the test lists besides min, example and max
    steps, method_programs   numerics_test(steps = ...): the calls in order (steps.py) and each
                          method's ExportedMethod; () and {} otherwise
    runtimes              ("python", "native") or a part: where the program runs (native.py)
    native_runner, native_runner_label   the native runner's path and label
    """

    label: str
    program: str
    pte: str
    ptd: str
    method: str
    exported_label: str
    pt2: str
    pt2_manifest: str
    spec: dict
    reference: str
    model: ModelConfig
    reference_program: dict
    backends: tuple
    quantized: bool
    tolerances: Tolerances
    min_sqnr_db: float
    min_top1_agreement: float
    calibration: Calibration
    inputs: tuple
    steps: tuple = ()
    method_programs: dict = dataclasses.field(default_factory=dict)
    runtimes: tuple = ("python",)
    native_runner: str = None
    native_runner_label: str = None

    @classmethod
    def from_json(cls, data):
        model = ModelConfig.from_json(data["model"]) if data.get("model") else None
        if model is not None:  # runfiles-relative roots, from the test's working directory
            model = dataclasses.replace(model, import_roots=tuple(os.path.abspath(r) for r in model.import_roots))
        calibration = data.get("calibration")
        return cls(
            label=data["label"],
            program=data["program"],
            pte=data["pte"],
            ptd=data.get("ptd"),
            method=data.get("method", "forward"),
            exported_label=data.get("exported_label"),
            pt2=data.get("pt2"),
            pt2_manifest=data.get("pt2_manifest"),
            spec=data.get("spec"),
            reference=data.get("reference", "eager"),
            model=model,
            reference_program=data.get("reference_program"),
            backends=_tuple(data.get("backends")),
            quantized=bool(data.get("quantized")),
            tolerances=Tolerances.from_json(data),
            min_sqnr_db=data.get("min_sqnr_db"),
            min_top1_agreement=data.get("min_top1_agreement"),
            calibration=Calibration(**calibration) if calibration else None,
            inputs=_tuple(data.get("inputs")),
            steps=_tuple(data.get("steps")),
            method_programs={name: ExportedMethod.from_json(m) for name, m in (data.get("method_programs") or {}).items()},
            runtimes=_tuple(data.get("runtimes") or ["python"]),
            native_runner=data.get("native_runner"),
            native_runner_label=data.get("native_runner_label"),
        )


@dataclasses.dataclass(frozen=True)
class SnapshotConfig:
    """graph_snapshot_test: the text of a .pt2 (and of a .pte's plan) against a golden file.

    subject           the torch_export or executorch_program the golden shows
    pt2, pte, spec    its .pt2, its .pte or None, and the export's shape spec (names symbols)
    golden            the golden's workspace-relative path
    update_target     the `bazel run` target that rewrites the golden
    """

    label: str
    subject: str
    pt2: str
    pte: str
    spec: dict
    golden: str
    update_target: str
    kind = "snapshot"

    @classmethod
    def from_json(cls, data):
        return cls(label=data["label"], subject=data["subject"], pt2=data["pt2"], pte=data.get("pte"),
                   spec=data.get("spec"), golden=data["golden"], update_target=data["update_target"])


@dataclasses.dataclass(frozen=True)
class Limits:
    """A program_budget_test's limits in bytes; None for no limit."""

    pte_bytes: int = None
    ptd_bytes: int = None
    planned_bytes: dict = dataclasses.field(default_factory=dict)  # {method: bytes}


@dataclasses.dataclass(frozen=True)
class BudgetConfig:
    """program_budget_test: a program's sizes against its limits and its golden.

    program, manifest, pte, ptd   the executorch_program, its manifest, .pte and .ptd or None
    methods           the program's methods (each one's planned memory is a figure)
    limits            Limits
    max_growth_percent   how much a figure may grow over the golden's; None: any
    golden, update_target   the golden's workspace-relative path (or None) and its `bazel run` target
    """

    label: str
    program: str
    manifest: str
    pte: str
    ptd: str
    methods: tuple
    limits: Limits
    max_growth_percent: float
    golden: str
    update_target: str
    kind = "budget"

    @classmethod
    def from_json(cls, data):
        limits = data.get("limits") or {}
        return cls(
            label=data["label"], program=data["program"], manifest=data["manifest"], pte=data["pte"],
            ptd=data.get("ptd"), methods=_tuple(data.get("methods")),
            limits=Limits(limits.get("pte_bytes"), limits.get("ptd_bytes"), dict(limits.get("planned_bytes") or {})),
            max_growth_percent=data.get("max_growth_percent"), golden=data.get("golden"),
            update_target=data["update_target"],
        )


@dataclasses.dataclass(frozen=True)
class BundledCasesConfig:
    """bundled_program_test: a .bpte's bundled cases in the ExecuTorch runtime.

    bundle, bpte, manifest   the bundled_program, its .bpte and manifest
    backends                 the program's backends (the tolerances' defaults)
    ptd                      the program's .ptd (weights = "external"), or None
    """

    label: str
    bundle: str
    bpte: str
    manifest: str
    backends: tuple
    tolerances: Tolerances
    ptd: str = None

    @classmethod
    def from_json(cls, data):
        return cls(label=data["label"], bundle=data["bundle"], bpte=data["bpte"], manifest=data["manifest"],
                   backends=_tuple(data.get("backends")), tolerances=Tolerances.from_json(data),
                   ptd=data.get("ptd"))


@dataclasses.dataclass(frozen=True)
class GenerationTestConfig:
    """llm_generation_test: an llm_program's greedy generation in ExecuTorch's runners.

    program, pte, ptd      the llm_program, its .pte and its .ptd or None
    tokenizer              {"label", "file", "manifest", "format"} of its tokenizer
    model                  ModelConfig of the eager model (the program's)
    manifest               the program's .pte.json (its constant methods: get_max_context_len)
    prompts, max_new_tokens   what to generate
    native_runner, native_runner_label   the native runner's path and label
    """

    label: str
    program: str
    pte: str
    ptd: str
    tokenizer: dict
    model: ModelConfig
    manifest: str
    prompts: tuple
    max_new_tokens: int
    native_runner: str
    native_runner_label: str

    @classmethod
    def from_json(cls, data):
        model = ModelConfig.from_json(data["model"])
        model = dataclasses.replace(model, import_roots=tuple(os.path.abspath(r) for r in model.import_roots))
        return cls(label=data["label"], program=data["program"], pte=data["pte"], ptd=data.get("ptd"),
                   tokenizer=data["tokenizer"], model=model, manifest=data["manifest"],
                   prompts=tuple(data["prompts"]), max_new_tokens=data["max_new_tokens"],
                   native_runner=data["native_runner"], native_runner_label=data["native_runner_label"])


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
