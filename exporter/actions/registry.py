"""The registry of actions, and each action's config: the JSON file its rule writes, as a typed
object.

The rules (rules/private/) write one JSON file per action; its config class reads it by
its type hints (core/typed_json.py), fills in the defaults (here, and only here: the rules load
them from exporter_facts.bzl, which exporter/facts.py generates from these classes), and keeps
the JSON itself as `raw`, whose digest the manifests record ("settings"). Every config has
ActionConfig's fields:

  label      the target's label, for messages
  identity   path of the toolchain's identity file (Python version and distributions)
  outputs    {role: path}: what the action writes ("pt2", "pte", "manifest", "log", ...)
  raw        the JSON itself

Each config class registers its action(s) with @action: the exporter's command, the Bazel
mnemonic its rule gives the action, and the module whose run(config) performs it. ACTIONS is
what the rest derives from: the command line's choices (driver.request), the worker's warm-up
(the module's warm_up()) and crash hints (driver.worker_child), and exporter_facts.bzl, whose
EXPORTER_ACTIONS the rules run the exporter by (//exporter:facts_test). Adding an action is: its
rule, its config class here with @action, and its module in exporter/actions/.
"""

import dataclasses
import typing

from exporter.core.backends import BackendOptions
from exporter.core.kernels import DEFAULT_KERNELS
from exporter.core.typed_json import Config, check, field, inline


@dataclasses.dataclass(frozen=True)
class Action:
    """One exporter action.

    command    `main.py <command> @params`; the rule passes it to run_exporter
    mnemonic   the mnemonic the rule gives the Bazel action (TorchExport, ...)
    module     the module whose run(config) performs it, exporter.actions.<name> (exporter.reports.<name>
               for an action that draws a report: its rule gives it the reports' renderer as a
               tool, //exporter:report_srcs, which no other action has)
    config     its config class (this module)
    worker     the command whose persistent worker runs it: its own, another's (sharing one warm
               process saves a start and torch's import per build), or "" for one-shot only.
               A worker runs the warm_up() of each module it runs that has one, once, before its
               first request; Bazel keys the worker by that command's mnemonic
               (exporter_action.bzl)
    remote     whether a remote executor may run it: False for an action that needs a tool of
               this machine that the remote image lacks (graphviz's dot); the rule marks it
               no-remote-exec
    torch      whether it runs torch: only then does the request set torch's reproducible math
               (core/determinism.py), which costs torch's import (3 s)
    """

    command: str
    mnemonic: str
    module: str
    config: type
    worker: str
    remote: bool = True
    torch: bool = True

    @property
    def tools(self):
        """The tool set its rule gives it besides the exporter's sources: "reports" or "exporter"."""
        return "reports" if self.module.startswith("exporter.reports.") else "exporter"


ACTIONS = {}  # command -> Action, in the order the classes below register them

# The execution requirements of an action that runs in a persistent worker (driver/worker.py, whose
# settings the toolchain takes from exporter_facts.bzl's EXPORTER_WORKER_REQUIREMENTS). Multiplex:
# one warm process per worker key takes a mnemonic's concurrent requests, each in a child forked
# from it; which actions share which worker is each action's `worker`. It speaks Bazel's default
# worker protocol, protobuf, so no flag is needed; it understands JSON too, for a toolchain whose
# worker_requirements add "requires-worker-protocol": "json" (Bazel 4.2.3 allows that only with
# --experimental_worker_allow_json_protocol). Without "supports-multiplex-workers" (or with
# --noexperimental_worker_multiplex) Bazel starts one process per concurrent action, each paying
# its own warm-up; a toolchain with worker_requirements = {} offers no worker at all.
WORKER_REQUIREMENTS = {"supports-multiplex-workers": "1", "supports-workers": "1"}


def action(command, mnemonic, module=None, worker=True, remote=True, torch=True, package="actions"):
    """Class decorator: registers the action `command`, run by exporter.<package>.<module> (the
    module defaults to the command).

    worker is True for a worker of its own, the command of an action registered before whose
    worker it shares, or False for none.
    """

    def register(cls):
        if command in ACTIONS:
            raise ValueError(f"two actions named {command!r}")
        host = command if worker is True else worker or ""
        if host not in ("", command) and getattr(ACTIONS.get(host), "worker", None) != host:
            raise ValueError(f"{command!r} shares the worker of {host!r}, which has none of its own")
        module_name = f"exporter.{package}.{module or command}"
        check(cls)  # a hint the decoder cannot check fails at import, in every test
        ACTIONS[command] = Action(command, mnemonic, module_name, cls, host, remote, torch)
        return cls

    return register



# What a program is lowered for when its target names no backends (LowerConfig's default).
DEFAULT_BACKENDS = ("xnnpack",)

# The entry of every hf_model's torch_model (core/hf_models.py; exporter_facts.bzl carries it).
HF_MODEL_ENTRY = "exporter.core.hf_models:build"

# The values some config fields take: their hints, which the decoder checks and exporter/facts.py
# reads for the rules (exporter_facts.bzl's IRS, WEIGHTS and BUNDLED_REFERENCES).
IR = typing.Literal["training", "inference", "core_aten"]
WEIGHTS = typing.Literal["inline", "external"]
BUNDLED_REFERENCE = typing.Literal["eager", "exported"]
# What a numerics_test compares with: the eager model, the .pt2's module(), or another
# torch_export's (reference_program); NUMERICS_REFERENCES in exporter_facts.bzl.
NUMERICS_REFERENCE = typing.Literal["eager", "exported", "program"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ActionConfig(Config):
    """The fields every action's config has (see above)."""

    label: str = "?"
    identity: str
    outputs: dict[str, str] = dataclasses.field(default_factory=dict)
    raw: dict = inline(repr=False)


@dataclasses.dataclass(frozen=True)
class LoraConfig(Config):
    """A lora_model's adapter over its base model (core/lora.py).

    label         the lora_model target, for messages
    rank, alpha   the factors' rank, and the update's scale alpha / rank
    target_modules   names of the linear layers the adapter changes (a name matches a module's
                  path or the end of it)
    checkpoint    path of the factors' file (.safetensors or torch.save), or None
    checkpoint_dir   path of a PEFT folder (adapter_model.safetensors, adapter_config.json), or
                  None; checkpoint_files are its files (recorded in the export's manifest)
    """

    label: str
    rank: int
    alpha: float
    target_modules: tuple[str, ...]
    checkpoint: str | None = None
    checkpoint_dir: str | None = None
    checkpoint_files: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class ModelConfig(Config):
    """A torch_model: how to build the nn.Module (see model_loader.load_model).

    entry         'package.module:callable' that returns the module
    init_args     keyword arguments for the callable
    checkpoint    path of a state_dict to load, or None
    checkpoint_dir   path of a checkpoint folder the entry is called with (checkpoint_dir=...),
                  or None; checkpoint_files are its files (recorded in the manifest)
    srcs          paths of the model's Python files (recorded in the manifest)
    import_roots  folders to put first on sys.path
    lora          a lora_model's LoraConfig (label is then the lora_model's, the rest its
                  base's), or None
    """

    label: str
    entry: str
    init_args: dict = dataclasses.field(default_factory=dict)
    checkpoint: str | None = None
    checkpoint_dir: str | None = None
    checkpoint_files: tuple[str, ...] = ()
    srcs: tuple[str, ...] = ()
    import_roots: tuple[str, ...] = (".",)
    lora: LoraConfig | None = None

    @property
    def kind(self):
        """The rule, for messages."""
        if self.lora:
            return "lora_model"
        return "hf_model" if self.entry.startswith(HF_MODEL_ENTRY) else "torch_model"


@dataclasses.dataclass(frozen=True)
class ExportOptions(Config):
    """torch_export's options: strict (TorchDynamo) tracing, the IR, its decompositions, and the
    eager model's weight and embedding quantization before export ("" for none;
    actions/eager_quantize.py), and ExecuTorch's LLM operators in its attention (core/llm_ops.py)."""

    strict: bool = False
    ir: IR = "training"
    decompose: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()
    quantize: str = ""
    group_size: int = 32
    embedding_quantize: str = ""
    llm_ops: tuple[str, ...] = ()

    def to_json(self):
        """The manifest's "export" record (quantize, embedding_quantize and llm_ops only when set,
        so that other manifests keep their bytes)."""
        record: dict[str, object] = {"strict": self.strict, "ir": self.ir, "decompose": list(self.decompose),
                                     "keep": list(self.keep)}
        if self.quantize:
            record.update(quantize=self.quantize, group_size=self.group_size)
        if self.embedding_quantize:
            record.update(embedding_quantize=self.embedding_quantize)
        if self.llm_ops:
            record.update(llm_ops=list(self.llm_ops))
        return record


@action("export", "TorchExport")
@dataclasses.dataclass(frozen=True, kw_only=True)
class ExportConfig(ActionConfig):
    """TorchExport: model + shape spec -> .pt2 (outputs "pt2", "manifest", "log").

    spec_label, spec   the shape_spec's label and JSON (documented in core/shape_spec.py)
    options            ExportOptions (in the JSON: top-level strict, ir, decompose, keep, ...)
    """

    model: ModelConfig
    spec_label: str
    spec: dict
    options: ExportOptions = inline()


@dataclasses.dataclass(frozen=True)
class MethodConfig(Config):
    """One method of a program: the exported program it lowers.

    exported_label     the torch_export (or torch_quantize) target the .pt2 came from
    pt2                path of the .pt2; the lowering never re-exports
    spec_label, spec   the export's shape_spec (names sizes in messages), or None
    export             the export's ExportOptions (the fixes a message may offer)
    """

    exported_label: str
    pt2: str
    spec_label: str | None = None
    spec: dict | None = None
    export: ExportOptions = dataclasses.field(default_factory=ExportOptions)


_METHOD_KEYS = tuple(f.name for f in dataclasses.fields(MethodConfig))


def _methods_json(data):
    """A program's "methods", or its one method "forward", whose fields sit at the top level."""
    if "methods" in data:
        return data["methods"]
    return {"forward": {key: value for key, value in data.items() if key in _METHOD_KEYS}}


@dataclasses.dataclass(frozen=True)
class TokenizerRef(Config):
    """A tokenizer target: its label (for messages) and its manifest (ids and vocabulary size)."""

    label: str
    manifest: str


@dataclasses.dataclass(frozen=True)
class LlmConfig(Config):
    """An llm_program's runner facts, from which actions/llm.py writes its constant methods.
    model_manifest: the export's manifest of an hf_model, whose "generation" record holds the
    model's own bos and eos ids (core/special_tokens.py); None for another model."""

    max_seq_len: int
    max_context_len: int
    tokenizer: TokenizerRef
    static_shape: bool = False  # True: forward takes one token per call (a static-shape backend)
    model_manifest: str | None = None


@dataclasses.dataclass(frozen=True)
class MultimodalConfig(Config):
    """A multimodal_program's runner facts, from which actions/multimodal.py writes its constant
    methods and checks the methods against each other and against the image it takes."""

    max_seq_len: int
    max_context_len: int
    tokenizer: TokenizerRef
    image_size: tuple[int, ...]  # (height, width)
    channels: int


@dataclasses.dataclass(frozen=True)
class FoundationRef(Config):
    """A foundation_weights target: its label and the index actions/sharing.py checks against."""

    label: str
    index: str


@action("lower", "ExecuTorchLower")
@dataclasses.dataclass(frozen=True, kw_only=True)
class LowerConfig(ActionConfig):
    """ExecuTorchLower: .pt2 files -> .pte (outputs "pte", "manifest", "log", optional "summary").

    methods     {method name: MethodConfig}; in the JSON either "methods" (several) or the one
                method's fields at the top level, which is "forward"
    backends    partitioners, e.g. ["xnnpack"]; [] is the portable runtime
    method_backends   {method name: tuple of partitioners} when the target gave one list per
                method, else None (every method takes `backends`)
    metadata    {name: int, float, bool or str}: constant methods of the program
    weights     "inline" (in the .pte) or "external" (in outputs["ptd"], ExecuTorch's .ptd)
    initialized_buffers   names of the mutated buffers whose initial value the .pte keeps;
                None (the JSON has no key) keeps every one (see core/buffers.py)
    kernels     the kernel libraries the operators outside delegates must be in (core/kernels.py);
                default the portable library of the executing venv's ExecuTorch
    llm         LlmConfig of an llm_program, else None
    multimodal  MultimodalConfig of a multimodal_program, else None
    foundation  FoundationRef of a program built against a foundation_weights, else None
    backend_options   the options of the backends that have some (core/backends.py), or None
    backend_packages  the paths of the identity files of the backend package repositories the
                lowering imports from (core/backend_site.py)
    release     the ExecuTorch release it is lowered for (core/releases.py), when not the
                toolchain's own: the action runs with that release's packages (core/release_site.py)
    """

    methods: dict[str, MethodConfig] = field(read=_methods_json, keys=("methods", *_METHOD_KEYS))
    backends: tuple[str, ...] = DEFAULT_BACKENDS
    metadata: dict = dataclasses.field(default_factory=dict)
    weights: WEIGHTS = "inline"
    initialized_buffers: tuple[str, ...] | None = None
    kernels: tuple[dict, ...] = DEFAULT_KERNELS
    method_backends: dict[str, tuple[str, ...]] | None = None
    llm: LlmConfig | None = None
    multimodal: MultimodalConfig | None = None
    foundation: FoundationRef | None = None
    backend_options: BackendOptions | None = None
    backend_packages: tuple[str, ...] = ()
    release: str | None = None

    def backends_of(self, method):
        """The partitioners of one method."""
        return self.method_backends[method] if self.method_backends else self.backends


@action("etrecord", "ExecuTorchETRecord", worker="lower")
@dataclasses.dataclass(frozen=True, kw_only=True)
class ETRecordConfig(LowerConfig):
    """ExecuTorchETRecord: the lowering again, with ExecuTorch's ETRecord (outputs "etrecord",
    "log"); actions/etrecord.py. The lowering's config, without kernels, and

    pte     path of the program's .pte, which the lowering again must give byte for byte
    """

    pte: str


@action("bundle", "ModelBundle", module="model_bundle", worker=False)
@dataclasses.dataclass(frozen=True, kw_only=True)
class BundleConfig(ActionConfig):
    """ModelBundle: programs -> one folder of digest-named files (outputs "bundle", "log").

    programs   [{"label", "kind": "pte" or "pt2", "file", "manifest"}], see model_bundle.py
    """

    programs: tuple[dict, ...]


@action("calibrate", "CalibrationData", worker="export")
@dataclasses.dataclass(frozen=True, kw_only=True)
class CalibrationConfig(ActionConfig):
    """CalibrationData: batch files or an entry -> one canonical batch file (outputs "batches",
    "manifest", "log").

    spec_label, spec   the shape_spec every batch must fit
    files              paths of .pt / .npz batch files (without an entry)
    entry              'package.module:callable' that returns or yields the batches, or ""
    init_args          keyword arguments for the entry
    import_roots       folders to put first on sys.path for the entry
    srcs               paths of the entry's Python files and data (recorded in the manifest)
    """

    spec_label: str
    spec: dict
    files: tuple[str, ...] = ()
    entry: str = ""
    init_args: dict = dataclasses.field(default_factory=dict)
    import_roots: tuple[str, ...] = (".",)
    srcs: tuple[str, ...] = ()
    kind = "calibration_data"


@dataclasses.dataclass(frozen=True)
class Calibration(Config):
    """The calibration_data a quantized program was calibrated on (no case may feed its batches)."""

    label: str
    batches: str


@action("quantize", "TorchQuantize", worker="export")
@dataclasses.dataclass(frozen=True, kw_only=True)
class QuantizeConfig(ActionConfig):
    """TorchQuantize: .pt2 + calibration batches -> quantized .pt2 (outputs "pt2", "manifest",
    "log").

    exported_label, pt2   the torch_export (or torch_quantize) target and its .pt2
    spec_label, spec      its shape_spec: the re-export uses it again
    strict                the export's strict setting, kept for the re-export
    quantizer, scheme     a backend with a quantizer of its own (its record's), and a scheme of
                          quantize.SCHEMES that it takes
    calibration           Calibration: the calibration_data's label and batches, or None
    backend_packages      the identity files of the package repositories of the quantizer's backend
                          (core/backend_site.py), when its packages have a lock of their own
    """

    exported_label: str
    pt2: str
    spec_label: str
    spec: dict
    strict: bool = False
    quantizer: str = "xnnpack"
    scheme: str = "int8_static_per_channel"
    calibration: Calibration | None = None
    backend_packages: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class BundledMethodConfig(Config):
    """One method of a bundled program: its test cases and what computes their expected outputs.

    exported_label, pt2   the torch_export the method was lowered from, and its .pt2
    spec                  its shape_spec (JSON, see core/shape_spec.py), examples filled in
    cases                 [{dim: size}]: one test case each, every dim named (analysis fills in
                          the examples)
    """

    exported_label: str
    pt2: str
    spec: dict
    cases: tuple[dict, ...]


@action("bundled_program", "BundledProgram", worker=False)
@dataclasses.dataclass(frozen=True, kw_only=True)
class BundledProgramConfig(ActionConfig):
    """BundledProgram: .pte + test inputs -> .bpte, ExecuTorch's BundledProgram (outputs "bpte",
    "manifest", "log").

    program_label       the executorch_program
    pte, pte_manifest   its .pte and .pte.json
    methods             {method name: BundledMethodConfig}
    reference           "eager" (the model's nn.Module) or "exported" (each method's .pt2)
    model               ModelConfig of the eager model, or None with reference "exported"
    """

    program_label: str
    pte: str
    pte_manifest: str
    methods: dict[str, BundledMethodConfig]
    reference: BUNDLED_REFERENCE = "eager"
    model: ModelConfig | None = None


@action("selected_ops", "ExecuTorchSelectedOps", worker=False)
@dataclasses.dataclass(frozen=True, kw_only=True)
class SelectedOpsConfig(ActionConfig):
    """ExecuTorchSelectedOps: programs' selected-operators files -> one merged file (outputs
    "selected_ops", "manifest", "log").

    lists   [{"label", "file"}]: each executorch_program and its <name>.selected_operators.yaml
    """

    lists: tuple[dict, ...] = ()


@action("tokenizer", "TokenizerCheck", worker=False)
@dataclasses.dataclass(frozen=True, kw_only=True)
class TokenizerConfig(ActionConfig):
    """TokenizerCheck: a tokenizer file -> its manifest (outputs "manifest", "log").

    src       path of the file: tokenizer.json, tokenizer.model, a tiktoken or llama2.c file
    format    "huggingface", "sentencepiece", "tiktoken" or "llama2c" (tokenizer.LOADERS)
    bos_id, eos_ids   the target's ids, or None / () for the tokenizer's own
    tokenizer_config  path of the tokenizer_config.json saved with a tokenizer.json, whose bos_token
              and eos_token name the tokenizer's own ids (core/special_tokens.py), or None
    """

    src: str
    format: str
    bos_id: int | None = None
    eos_ids: tuple[int, ...] = ()
    tokenizer_config: str | None = None


@action("instructions", "InstructionCount", worker=False, remote=False, torch=False)
@dataclasses.dataclass(frozen=True, kw_only=True)
class InstructionsConfig(ActionConfig):
    """InstructionCount: the instructions each method of a program runs in the native runner,
    counted by valgrind's callgrind (outputs "counts", "log"; actions/instructions.py). It runs
    Debian's valgrind, which the remote image lacks.

    program        the executorch_program, for messages and the counts' file
    pte, ptd       its .pte, and its .ptd (weights = "external") or None
    methods        the methods to call, in this order, once each
    runner         the native runner (built for this machine: the action runs it)
    callgrind      valgrind's callgrind launcher (@valgrind//:callgrind.sh)
    valgrind_version   its version file, recorded in the counts
    """

    program: str
    pte: str
    methods: tuple[str, ...]
    runner: str
    callgrind: str
    valgrind_version: str
    ptd: str | None = None


@action("foundation", "FoundationWeights", worker=False)
@dataclasses.dataclass(frozen=True, kw_only=True)
class FoundationConfig(ActionConfig):
    """FoundationWeights: a program's .ptd -> the foundation's index (outputs "index", "log";
    actions/foundation.py).

    program    the executorch_program (weights = "external") whose .ptd the foundation is
    ptd        path of that .ptd
    manifest   path of the program's manifest, which records the .ptd's digest and backends
    """

    program: str
    ptd: str
    manifest: str


@action("report", "ProgramReport", worker=False, remote=False, torch=False, package="reports")
@dataclasses.dataclass(frozen=True, kw_only=True)
class ReportConfig(ActionConfig):
    """ProgramReport: a program's files -> <name>.report.html and its summary <name>.report.json
    (outputs "html", "summary", "log"); reports/report.py. It runs graphviz's dot, which the
    remote image lacks.

    graph          the lowering's graph record (<name>.program_graph.json, actions/program_graph.py)
    pte, manifest  the .pte and its .pte.json
    ptd            the .ptd (weights = "external"), or None
    exports        {method: its .pt2.json}
    selected_operators   the program's <name>.selected_operators.yaml, or None
    kernels        the kernel libraries the program was checked against, by name
    dot, dot_version     graphviz's launcher and version file (@graphviz)
    etdump, etdump_method   an ETDump of one method's native runs, for its times, or None
    """

    graph: str
    pte: str
    manifest: str
    dot: str
    dot_version: str
    ptd: str | None = None
    exports: dict[str, str] = dataclasses.field(default_factory=dict)
    selected_operators: str | None = None
    kernels: tuple[str, ...] = ()
    etdump: str | None = None
    etdump_method: str = "forward"


@action("dashboard", "ProgramDashboard", worker=False, torch=False, package="reports")
@dataclasses.dataclass(frozen=True, kw_only=True)
class DashboardConfig(ActionConfig):
    """ProgramDashboard: programs' report summaries -> one page across them (outputs "html",
    "log"); reports/dashboard.py.

    title       the page's title (the target's label)
    package     the dashboard's package: its links to the reports are relative to it
    summaries   paths of the programs' <name>.report.json
    budgets     paths of program_budget_tests' configs (label, program, limits)
    numerics    paths of numerics_tests' configs (label, program, min_sqnr_db)
    instructions   paths of program_budget_tests' instruction counts (actions/instructions.py)
    """

    title: str
    package: str
    summaries: tuple[str, ...] = ()
    budgets: tuple[str, ...] = ()
    numerics: tuple[str, ...] = ()
    instructions: tuple[str, ...] = ()


@action("snapshot_text", "GraphSnapshot", worker="export")
@dataclasses.dataclass(frozen=True, kw_only=True)
class SnapshotTextConfig(ActionConfig):
    """GraphSnapshot: a graph_snapshot_test's text, rendered from its .pt2 and .pte (outputs
    "text", "log"); actions/snapshot_text.py. In the export's worker, which has torch warm.

    subject      the torch_export or executorch_program the text shows
    pt2, pte     its .pt2, and its .pte or None (a torch_export's test)
    spec         the export's shape spec, whose dims name the size symbols
    """

    subject: str
    pt2: str
    pte: str | None = None
    spec: dict | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class NumericsCases(Config):
    """What decides a numerics_test's values: the method under test, what computes its expected
    outputs, and the cases. One schema for the test's build action (NumericsValuesConfig, with
    execroot paths) and the test itself (checks/contract.py's NumericsConfig, runfiles paths);
    each adds what is its own, and the model and method programs in the form it reads them.

    pte, ptd, method      the program, its .ptd or None, the method under test
    exported_label, pt2, pt2_manifest, spec   the method's torch_export, .pt2, manifest, spec
    reference             "eager" (the model), "exported" (the .pt2) or "program" (reference_program)
    reference_program     {"label", "pt2"} of another torch_export, or None
    calibration           Calibration of a quantized program, or None
    inputs, arm64_inputs  the cases the test lists besides min, example and max, and the only
                          cases of the arm64 run (() for all)
    steps                 a stateful test's calls in order (steps.py), or ()
    runtimes              where the program runs: "python" among them runs the Python runtime
    backend_packages      the identity files of the program's backend package repositories
                          (core/backend_site.py): a backend's runtime library or reference runtime
    runtime_python        the interpreter of the venv the release's Python runtime runs in, when it
                          needs another torch than the toolchain's (core/runtime_process.py), or None
    """

    pte: str
    ptd: str | None = None
    method: str = "forward"
    exported_label: str | None = None
    pt2: str | None = None
    pt2_manifest: str | None = None
    spec: dict | None = None
    reference: NUMERICS_REFERENCE = "eager"
    reference_program: dict | None = None
    calibration: Calibration | None = None
    inputs: tuple[dict, ...] = ()
    arm64_inputs: tuple[dict, ...] = ()
    steps: tuple[dict, ...] = ()
    runtimes: tuple[str, ...] = ("python",)
    backend_packages: tuple[str, ...] = ()
    runtime_python: str | None = None


@action("numerics_values", "NumericsValues", worker="export")
@dataclasses.dataclass(frozen=True, kw_only=True)
class NumericsValuesConfig(ActionConfig, NumericsCases):
    """NumericsValues: what a numerics_test compares, its calls' inputs, the reference's outputs
    and the Python runtime's (outputs "values", "data", "log"); actions/numerics_values.py. In
    the export's worker, which loads models and has torch warm; its warm-up adds ExecuTorch's
    Python runtime. Its fields are NumericsCases', with execroot paths, and:

    model                 ModelConfig of the eager model, or None
    method_programs       a stateful test's MethodConfig of each method it calls
    """

    model: ModelConfig | None = None
    method_programs: dict[str, MethodConfig] = dataclasses.field(default_factory=dict)
