"""Writing and reading .pt2 files: what makes them reproducible, and what a loaded one needs.

Written files drop node metadata that depends on the process or the machine:
- "stack_trace" holds absolute (sandbox) paths, which differ from action to action;
- "from_node" is provenance that passes such as run_decompositions record, and each entry
  names its graph by `graph_id`, a Python object id: it differs between processes, and two
  graphs may even share an id once the first is freed, so no renumbering makes it stable.
  ExecuTorch's devtools match provenance against the graph ids of the process that lowers,
  which never equal the ids of the process that exported, so nothing downstream loses by it.

Strict export (TorchDynamo) keys a node's nn_module_stack entries by id(module), another
Python object id, with "@<n>" for a module's n-th call after its first (T5's dropout); non-strict
export keys them by the module's path ("L__self__body"). Written files use the path for both,
keeping the call's "@<n>".

Loaded files get one repair before anything traces them again (see docs/shape_specs.md,
"Derived sizes after a round trip"). Before that, a file is hostile: load() refuses what torch
would unpickle other than with its weights-only unpickler (archives.py), and a corrupt file
fails in one line (core.errors.BadFile).
"""

import contextlib
import importlib
import io
import logging
import re
import zipfile

import sympy
import torch

from exporter.core import atomic
from exporter.core.errors import BadFile
from exporter.formats import archives

# Node metadata that never reaches a written .pt2.
_PROCESS_SPECIFIC_META = ("stack_trace", "from_node")

# Strict export's nn_module_stack key: id(module), then "@<n>" from a module's second call on.
_MODULE_ID_KEY = re.compile(r"\d+(@\d+)?")


def graph_modules(ep):
    """Every torch.fx GraphModule of the program: the root and its submodules (cond branches)."""
    return [m for m in ep.graph_module.modules() if isinstance(m, torch.fx.GraphModule)]


def normalise(ep):
    """Drops or renames the node metadata that differs between processes and machines."""
    for gm in graph_modules(ep):
        for node in gm.graph.nodes:
            for key in _PROCESS_SPECIFIC_META:
                node.meta.pop(key, None)
            stack = node.meta.get("nn_module_stack")
            if stack:
                node.meta["nn_module_stack"] = {_stack_key(key, value[0]): value for key, value in stack.items()}
    return ep


def _stack_key(key, module_path):
    """A strict export's key by id(module) as the module's path, with the call's "@<n>"."""
    by_id = _MODULE_ID_KEY.fullmatch(str(key))
    return f"L__self__{module_path}{by_id.group(1) or ''}" if by_id else key


def save(ep, path):
    """Normalises ep and writes it to path atomically (no half-written .pt2 on failure)."""
    normalise(ep)
    with atomic.replacing(path) as tmp:
        torch.export.save(ep, tmp)


class UnregisteredOperators(BadFile, RuntimeError):
    """A .pt2 that calls operators this process has not registered (a custom op whose library was
    not imported): torch.export.load's RuntimeError, said in one line that names them."""


# Operators of a model quantized before export that only importing their library registers, so
# only for such programs: torch_export's quantize calls torchao's and keeps its weights as
# torchao's tensors (1.5 s); its embedding_quantize calls ExecuTorch's quantized tables, which
# ExecuTorch defines (a process that has not imported executorch.exir lacks them).
_OPERATOR_LIBRARIES = (
    ("torchao.", "torchao.quantization"),
    ("quantized_decomposed.embedding_", "executorch.exir.passes._quant_patterns_and_replacements"),
    ("llama.", "executorch.extension.llm.custom_ops.custom_ops"),  # llm_ops' custom_sdpa, update_cache
)


def load(path):
    """torch.export.load, refusing what could run code, plus the repair that lets the program be
    traced again. A corrupt or refused file raises BadFile, one line naming it (archives.py)."""
    # Registers the quantized_decomposed operators a quantized program calls (15 ms; torchao's
    # module registers the same ones in 1.5 s).
    import torch.ao.quantization.fx._decomposed  # noqa: F401

    with open(path, "rb") as f:
        raw = f.read()  # checked and loaded from these bytes, so the file cannot change in between
    archive = archives.open_zip(raw, path, ".pt2")
    unresolved = _unresolved(archive)
    for prefix, library in _OPERATOR_LIBRARIES:
        if any(name.startswith(prefix) for name in unresolved):
            importlib.import_module(library)
            unresolved = _unresolved(archive)
    archives.check_pt2(archive, path)
    with archives.weights_only(), _kept_warnings("torch.export") as kept:
        try:
            ep = torch.export.load(io.BytesIO(raw))
        except Exception as e:
            if unresolved:
                raise UnregisteredOperators(f"{path}: calls operators this process has not registered: "
                                            f"{', '.join(unresolved)}; import the library that defines them") from e
            cause = kept.errors[0] if kept.errors else e  # what went wrong, not "check the warnings above"
            raise BadFile(f"{path}: torch.export.load cannot read it: {_describe(cause)}") from e
    _drop_derived_ranges_from_shape_env(ep)
    return ep


class _Kept(logging.Handler):
    """The exceptions a logger's records carry, kept instead of printed."""

    def __init__(self):
        super().__init__()
        self.errors = []

    def emit(self, record):
        if record.exc_info:
            self.errors.append(record.exc_info[1])


@contextlib.contextmanager
def _kept_warnings(logger):
    """Keeps `logger`'s records in the block: torch.export.load logs the traceback of the error it
    met and then raises one that says "check the warnings above", and load() says it in one line."""
    log, kept = logging.getLogger(logger), _Kept()
    handlers, propagate = log.handlers, log.propagate  # torch gives the logger a stderr handler
    log.handlers, log.propagate = [kept], False
    try:
        yield kept
    finally:
        log.handlers, log.propagate = handlers, propagate


def _describe(error):
    """"KeyError: 'weight' (in a node calling torch.ops.aten.conv2d.default)": the first error of a
    chain, and the node torch's deserializer was at (its own message prints the whole node)."""
    root = error
    while root.__cause__ is not None:
        root = root.__cause__
    node = re.search(r"Node\(target='([^']+)'", str(error))
    first = (str(root).strip().splitlines() or [""])[0]
    return f"{type(root).__name__}: {first[:200]}" + (f" (in a node calling {node[1]})" if node else "")


_TARGET = re.compile(r'"target":\s*"torch\.ops\.([\w.]+)"')


def unresolved_operators(path):
    """The operators the .pt2 calls that this process has not registered (custom ops whose
    library was not imported), e.g. ["tutorial.scaled_sin.default"].

    torch.export.load fails on them with a generic message (the cause goes to its log only).
    """
    with zipfile.ZipFile(path) as archive:
        return _unresolved(archive)


def _unresolved(archive):
    names = set()
    for member in archive.namelist():
        if member.endswith(".json") and "/models/" in member:
            names.update(_TARGET.findall(archive.read(member).decode("utf-8", "replace")))
    missing = []
    for name in sorted(names):
        if name.count(".") < 1:  # no namespace.op: nothing registers it (a crafted file's)
            missing.append(name)
            continue
        namespace, op, *overload = name.split(".")
        packet = getattr(getattr(torch.ops, namespace), op, None) if namespace else None
        if packet is None or (overload and not hasattr(packet, overload[0])):
            missing.append(name)
    return missing


def _drop_derived_ranges_from_shape_env(ep):
    """Removes ranges keyed by expressions (such as `2*s77`) from the loaded ShapeEnv.

    torch.export keeps a derived dim's range in range_constraints under its expression. The
    in-memory program's ShapeEnv ranges only symbols; torch.export.load re-creates the ShapeEnv
    from range_constraints and also ranges the expression there (serialize.py,
    `constrain_symbol_range(sym, ...)` for every key). The next trace (run_decompositions,
    which to_edge and prepare_pt2e call) then fails in `_replace_unbacked_bindings` with
    "AssertionError: expected sympy.Symbol". An expression's range follows from its symbol's
    range, so dropping it loses nothing, and ep.range_constraints itself stays as written.
    Seen with torch 2.13.0; the pass came with pytorch/pytorch#147574.
    """
    from torch._guards import detect_fake_mode

    fake_mode = detect_fake_mode([n.meta.get("val") for n in ep.graph.nodes])
    shape_env = getattr(fake_mode, "shape_env", None)
    if shape_env is None:
        return
    for table in (shape_env.var_to_range, getattr(shape_env, "var_to_range_sloc", {})):
        for key in [k for k in table if not isinstance(k, sympy.Symbol)]:
            del table[key]
