"""Each exporter action's config (the JSON file its rule writes, as a typed object), and the
registry of actions.

The rules (rules/private/*.bzl) write one JSON file per action; from_json reads it, fills in
the defaults (here, and only here), and keeps the JSON itself as `raw`, whose digest the
manifests record ("settings"). Every config has:

  label      the target's label, for messages
  identity   path of the toolchain's identity file (Python version and distributions)
  outputs    {role: path}: what the action writes ("pt2", "pte", "manifest", "log", ...)

Each config class registers its action(s) with @action: the exporter's command, the Bazel
mnemonic its rule gives the action, and the module whose run(config) performs it. ACTIONS is
what the rest derives from: the command line's choices (driver.request), the worker's warm-up
(the module's warm_up()) and crash hints (driver.worker_child), and the parity with the rules
(exporter/actions/registry_test.py). Adding an action is: its rule, its config class here
with @action, and its module in exporter/actions/.
"""

import dataclasses

from exporter.core.kernels import DEFAULT_KERNELS


@dataclasses.dataclass(frozen=True)
class Action:
    """One exporter action.

    command    `main.py <command> @params`; the rule passes it to run_exporter
    mnemonic   the mnemonic the rule gives the Bazel action (TorchExport, ...)
    module     the module whose run(config) performs it, exporter.actions.<name>
    config     its config class (this module)
    worker     whether the rule offers the persistent worker; such a module also has warm_up(),
               which a worker runs once before its first request
    """

    command: str
    mnemonic: str
    module: str
    config: type
    worker: bool


ACTIONS = {}  # command -> Action, in the order the classes below register them


def action(command, mnemonic, module=None, worker=True):
    """Class decorator: registers the action `command` (its module defaults to the command)."""

    def register(cls):
        if command in ACTIONS:
            raise ValueError(f"two actions named {command!r}")
        ACTIONS[command] = Action(command, mnemonic, f"exporter.actions.{module or command}", cls, worker)
        return cls

    return register


IRS = ("training", "inference", "core_aten")


def _common(data):
    """The fields every action's config has (see above), and the JSON itself as `raw`."""
    return {"label": data.get("label", "?"), "identity": data["identity"],
            "outputs": dict(data.get("outputs", {})), "raw": data}


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """A torch_model: how to build the nn.Module (see model_loader.load_model).

    entry         'package.module:callable' that returns the module
    init_args     keyword arguments for the callable
    checkpoint    path of a state_dict to load, or None
    checkpoint_dir   path of a checkpoint folder the entry is called with (checkpoint_dir=...),
                  or None; checkpoint_files are its files (recorded in the manifest)
    srcs          paths of the model's Python files (recorded in the manifest)
    import_roots  folders to put first on sys.path
    """

    label: str
    entry: str
    init_args: dict = dataclasses.field(default_factory=dict)
    checkpoint: str = None
    checkpoint_dir: str = None
    checkpoint_files: tuple = ()
    srcs: tuple = ()
    import_roots: tuple = (".",)
    kind = "torch_model"  # the rule, for messages

    @classmethod
    def from_json(cls, data):
        return cls(
            label=data["label"],
            entry=data["entry"],
            init_args=dict(data.get("init_args") or {}),
            checkpoint=data.get("checkpoint"),
            checkpoint_dir=data.get("checkpoint_dir"),
            checkpoint_files=tuple(data.get("checkpoint_files", ())),
            srcs=tuple(data.get("srcs", ())),
            import_roots=tuple(data.get("import_roots", (".",))),
        )


@dataclasses.dataclass(frozen=True)
class ExportOptions:
    """torch_export's options: strict (TorchDynamo) tracing, the IR, its decompositions, and the
    eager model's weight quantization before export ("" for none; actions/eager_quantize.py)."""

    strict: bool = False
    ir: str = "training"
    decompose: tuple = ()
    keep: tuple = ()
    quantize: str = ""
    group_size: int = 32

    @classmethod
    def from_json(cls, data):
        data = data or {}
        return cls(
            strict=bool(data.get("strict", False)),
            ir=data.get("ir", "training"),
            decompose=tuple(data.get("decompose", ())),
            keep=tuple(data.get("keep", ())),
            quantize=data.get("quantize") or "",
            group_size=int(data.get("group_size") or 32),
        )

    def to_json(self):
        """The manifest's "export" record (quantize only when set, so that other manifests keep
        their bytes)."""
        record = {"strict": self.strict, "ir": self.ir, "decompose": list(self.decompose), "keep": list(self.keep)}
        if self.quantize:
            record.update(quantize=self.quantize, group_size=self.group_size)
        return record


@action("export", "TorchExport")
@dataclasses.dataclass(frozen=True)
class ExportConfig:
    """TorchExport: model + shape spec -> .pt2 (outputs "pt2", "manifest", "log").

    spec_label, spec   the shape_spec's label and JSON (documented in core/shape_spec.py)
    options            ExportOptions (in the JSON: top-level strict, ir, decompose, keep)
    """

    label: str
    identity: str
    outputs: dict
    model: ModelConfig
    spec_label: str
    spec: dict
    options: ExportOptions
    raw: dict

    @classmethod
    def from_json(cls, data):
        return cls(
            **_common(data),
            model=ModelConfig.from_json(data["model"]),
            spec_label=data["spec_label"],
            spec=data["spec"],
            options=ExportOptions.from_json(data),
        )


@dataclasses.dataclass(frozen=True)
class MethodConfig:
    """One method of a program: the exported program it lowers.

    exported_label     the torch_export (or torch_quantize) target the .pt2 came from
    pt2                path of the .pt2; the lowering never re-exports
    spec_label, spec   the export's shape_spec (names sizes in messages), or None
    export             the export's ExportOptions (the fixes a message may offer)
    """

    exported_label: str
    pt2: str
    spec_label: str
    spec: dict
    export: ExportOptions

    @classmethod
    def from_json(cls, data):
        return cls(
            exported_label=data["exported_label"],
            pt2=data["pt2"],
            spec_label=data.get("spec_label"),
            spec=data.get("spec"),
            export=ExportOptions.from_json(data.get("export")),
        )


@action("etrecord", "ExecuTorchETRecord")  # with raw["pte"], the program to describe
@action("lower", "ExecuTorchLower")
@dataclasses.dataclass(frozen=True)
class LowerConfig:
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
    llm         for an llm_program: {"max_seq_len", "max_context_len", "tokenizer": {"label",
                "manifest"}}, from which actions/llm.py writes the runner's constant methods;
                else None
    """

    label: str
    identity: str
    outputs: dict
    methods: dict
    backends: tuple
    metadata: dict
    weights: str
    initialized_buffers: tuple
    raw: dict
    kernels: tuple = DEFAULT_KERNELS
    method_backends: dict = None
    llm: dict = None

    def backends_of(self, method):
        """The partitioners of one method."""
        return self.method_backends[method] if self.method_backends else self.backends

    @classmethod
    def from_json(cls, data):
        if "methods" in data:
            methods = {name: MethodConfig.from_json(m) for name, m in data["methods"].items()}
        else:
            methods = {"forward": MethodConfig.from_json(data)}
        return cls(
            **_common(data),
            methods=methods,
            backends=tuple(data.get("backends", ())),
            metadata=dict(data.get("metadata") or {}),
            weights=data.get("weights", "inline"),
            initialized_buffers=None if data.get("initialized_buffers") is None else tuple(data["initialized_buffers"]),
            kernels=tuple(data.get("kernels") or DEFAULT_KERNELS),
            method_backends={name: tuple(b) for name, b in data["method_backends"].items()}
            if data.get("method_backends") is not None else None,
            llm=data.get("llm"),
        )


@action("bundle", "ModelBundle", module="model_bundle", worker=False)
@dataclasses.dataclass(frozen=True)
class BundleConfig:
    """ModelBundle: programs -> one folder of digest-named files (outputs "bundle", "log").

    programs   [{"label", "kind": "pte" or "pt2", "file", "manifest"}], see model_bundle.py
    """

    label: str
    identity: str
    outputs: dict
    programs: tuple
    raw: dict

    @classmethod
    def from_json(cls, data):
        return cls(
            **_common(data),
            programs=tuple(data["programs"]),
        )


@action("calibrate", "CalibrationData", worker=False)
@dataclasses.dataclass(frozen=True)
class CalibrationConfig:
    """CalibrationData: batch files or an entry -> one canonical batch file (outputs "batches",
    "manifest", "log").

    spec_label, spec   the shape_spec every batch must fit
    files              paths of .pt / .npz batch files (without an entry)
    entry              'package.module:callable' that returns or yields the batches, or None
    init_args          keyword arguments for the entry
    import_roots       folders to put first on sys.path for the entry
    srcs               paths of the entry's Python files and data (recorded in the manifest)
    """

    label: str
    identity: str
    outputs: dict
    spec_label: str
    spec: dict
    files: tuple
    entry: str
    init_args: dict
    import_roots: tuple
    srcs: tuple
    raw: dict
    kind = "calibration_data"

    @classmethod
    def from_json(cls, data):
        return cls(
            **_common(data),
            spec_label=data["spec_label"],
            spec=data["spec"],
            files=tuple(data.get("files", ())),
            entry=data.get("entry") or None,
            init_args=dict(data.get("init_args") or {}),
            import_roots=tuple(data.get("import_roots", (".",))),
            srcs=tuple(data.get("srcs", ())),
        )


@action("quantize", "TorchQuantize")
@dataclasses.dataclass(frozen=True)
class QuantizeConfig:
    """TorchQuantize: .pt2 + calibration batches -> quantized .pt2 (outputs "pt2", "manifest",
    "log").

    exported_label, pt2   the torch_export (or torch_quantize) target and its .pt2
    spec_label, spec      its shape_spec: the re-export uses it again
    strict                the export's strict setting, kept for the re-export
    quantizer, scheme     see quantize.QUANTIZERS and quantize.SCHEMES
    calibration           {"label", "batches", "manifest"} of a calibration_data, or None
    """

    label: str
    identity: str
    outputs: dict
    exported_label: str
    pt2: str
    spec_label: str
    spec: dict
    strict: bool
    quantizer: str
    scheme: str
    calibration: dict
    raw: dict

    @classmethod
    def from_json(cls, data):
        return cls(
            **_common(data),
            exported_label=data["exported_label"],
            pt2=data["pt2"],
            spec_label=data["spec_label"],
            spec=data["spec"],
            strict=bool(data.get("strict", False)),
            quantizer=data.get("quantizer", "xnnpack"),
            scheme=data.get("scheme", "int8_static_per_channel"),
            calibration=data.get("calibration"),
        )


@dataclasses.dataclass(frozen=True)
class BundledMethodConfig:
    """One method of a bundled program: its test cases and what computes their expected outputs.

    exported_label, pt2   the torch_export the method was lowered from, and its .pt2
    spec                  its shape_spec (JSON, see core/shape_spec.py), examples filled in
    cases                 [{dim: size}]: one test case each, every dim named (analysis fills in
                          the examples)
    """

    exported_label: str
    pt2: str
    spec: dict
    cases: tuple

    @classmethod
    def from_json(cls, data):
        return cls(
            exported_label=data["exported_label"],
            pt2=data["pt2"],
            spec=data["spec"],
            cases=tuple(dict(c) for c in data["cases"]),
        )


@action("bundled_program", "BundledProgram", worker=False)
@dataclasses.dataclass(frozen=True)
class BundledProgramConfig:
    """BundledProgram: .pte + test inputs -> .bpte, ExecuTorch's BundledProgram (outputs "bpte",
    "manifest", "log").

    program_label       the executorch_program
    pte, pte_manifest   its .pte and .pte.json
    methods             {method name: BundledMethodConfig}
    reference           "eager" (the model's nn.Module) or "exported" (each method's .pt2)
    model               ModelConfig of the eager model, or None with reference "exported"
    """

    label: str
    identity: str
    outputs: dict
    program_label: str
    pte: str
    pte_manifest: str
    methods: dict
    reference: str
    model: ModelConfig
    raw: dict

    @classmethod
    def from_json(cls, data):
        return cls(
            **_common(data),
            program_label=data["program_label"],
            pte=data["pte"],
            pte_manifest=data["pte_manifest"],
            methods={name: BundledMethodConfig.from_json(m) for name, m in data["methods"].items()},
            reference=data.get("reference", "eager"),
            model=ModelConfig.from_json(data["model"]) if data.get("model") else None,
        )


@action("selected_ops", "ExecuTorchSelectedOps", worker=False)
@dataclasses.dataclass(frozen=True)
class SelectedOpsConfig:
    """ExecuTorchSelectedOps: programs' selected-operators files -> one merged file (outputs
    "selected_ops", "manifest", "log").

    lists   [{"label", "file"}]: each executorch_program and its <name>.selected_operators.yaml
    """

    label: str
    identity: str
    outputs: dict
    lists: tuple
    raw: dict

    @classmethod
    def from_json(cls, data):
        return cls(**_common(data), lists=tuple(data.get("lists") or ()))


@action("tokenizer", "TokenizerCheck", worker=False)
@dataclasses.dataclass(frozen=True)
class TokenizerConfig:
    """TokenizerCheck: a tokenizer file -> its manifest (outputs "manifest", "log").

    src       path of the file: tokenizer.json, tokenizer.model, a tiktoken or llama2.c file
    format    "huggingface", "sentencepiece", "tiktoken" or "llama2c" (tokenizer.LOADERS)
    bos_id, eos_ids   the target's ids, or None / () for the tokenizer's own
    """

    label: str
    identity: str
    outputs: dict
    src: str
    format: str
    bos_id: int
    eos_ids: tuple
    raw: dict

    @classmethod
    def from_json(cls, data):
        return cls(**_common(data), src=data["src"], format=data["format"], bos_id=data.get("bos_id"),
                   eos_ids=tuple(data.get("eos_ids") or ()))
