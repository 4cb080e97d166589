"""Kernel coverage: every operator a program leaves outside its delegates needs a kernel in the
kernel library the app links, or the program fails to load on the device ("OperatorMissing").

A library is a list in the format ExecuTorch's codegen reads (functions.yaml, custom_ops.yaml):
entries `- op: add.out` (an ATen op) or `- func: ns::op.out(...) -> ...`, each with `kernels`,
whose `arg_meta` is null (every dtype) or names type aliases (`type_alias: {T0: [Float]}`) that
restrict the dtypes. The lowering's config names the libraries:

  {"name": "portable", "files": [paths]}   a list the installed ExecuTorch ships (declared
                                           inputs; files None: read from the executing venv)
  {"name": "optimized", "files": []}       the wheel ships no YAML for it: the kernels that its
                                           runtime (the pybindings) registers, portable's plus
                                           the optimized ones
  {"name": "//pkg:my_ops.yaml", "files": [path], "custom": true}   a user's list

The runtime's own operators (executorch_prim::*, aten::sym_size.int, ...) need no library.
"""

import os

from exporter.core import operators
from exporter.core.dtypes import executorch_name
from exporter.core.errors import UserError

BUILTIN = ("portable", "optimized", "quantized")

# executorch_program's kernels when the config names none: ExecuTorch's portable library.
DEFAULT_KERNELS = ({"name": "portable"},)

_TENSOR_KINDS = (5, 10, 11)  # Tensor, TensorList, optional TensorList in the program's values


def _executorch_dir():
    import executorch

    return list(executorch.__path__)[0]


def _runtime_ops():
    """The operators every ExecuTorch runtime registers itself (prim ops): symbolic sizes and
    scalar arithmetic, as exir emits them."""
    from executorch.exir.passes import executorch_prim_ops_registry as prims

    return {operators.kernel_name(op.name()) for op in prims._EXECUTORCH_SYM_OPS if hasattr(op, "name")}


class Library:
    """One kernel library: {op name: None (every dtype) or [set of dtype names per kernel]}."""

    def __init__(self, name, kernels):
        self.name = name
        self.kernels = kernels

    def covers(self, op, dtypes):
        """Whether the library has a kernel for op with all these dtypes (names)."""
        if op not in self.kernels:
            return False
        allowed = self.kernels[op]
        return allowed is None or any(set(dtypes) <= kernel for kernel in allowed)


def _entry_name(entry, where):
    if "op" in entry:
        return operators.kernel_name(str(entry["op"]))
    if "func" in entry:
        return operators.kernel_name(str(entry["func"]).split("(")[0].strip())
    raise UserError(f"{where}: an entry has neither `op` nor `func` ({sorted(entry)}); write each "
                    f"entry as `- op: add.out` or `- func: my_ns::my_op.out(Tensor self, *, "
                    f"Tensor(a!) out) -> Tensor(a!)`, as ExecuTorch's functions.yaml does")


def _entry_dtypes(entry, where):
    """None (every dtype) or a list with each kernel's set of dtype names."""
    kernels = entry.get("kernels")
    if kernels is None:
        return None  # a custom_ops.yaml entry without kernels lists the op for every dtype
    aliases = entry.get("type_alias") or {}
    allowed = []
    for kernel in kernels:
        meta = kernel.get("arg_meta") if isinstance(kernel, dict) else None
        if not meta:
            return None
        dtypes = set()
        for arg, spec in meta.items():
            alias = spec[0] if isinstance(spec, list) and spec else spec
            if alias not in aliases:
                raise UserError(f"{where}: {_entry_name(entry, where)}: arg_meta[{arg!r}] names type "
                                f"alias {alias!r}, which `type_alias` does not define; add it, "
                                f"e.g. type_alias: {{{alias}: [Float]}}")
            dtypes.update(str(d) for d in aliases[alias])
        allowed.append(dtypes)
    return allowed


def load_yaml(paths, where):
    """{op name: dtypes} from kernel list files; `where` names them in messages."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's: 10 times faster
    kernels = {}
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                entries = yaml.load(f, Loader=loader)
        except (OSError, yaml.YAMLError) as e:
            raise UserError(f"{where}: cannot read {os.path.basename(path)} as YAML "
                            f"({str(e).splitlines()[0]}); fix the file") from e
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise UserError(f"{where}: {os.path.basename(path)} is not a list of entries; write it "
                            f"as ExecuTorch's functions.yaml: `- op: add.out` with `kernels:`")
        for entry in entries:
            name, dtypes = _entry_name(entry, where), _entry_dtypes(entry, where)
            if name in kernels and kernels[name] is not None:
                kernels[name] = None if dtypes is None else kernels[name] + dtypes
            elif name not in kernels:
                kernels[name] = dtypes
    return kernels


def _shipped(name):
    """The YAML files of a built-in library in the executing venv's ExecuTorch."""
    folder = os.path.join(_executorch_dir(), "kernels", name)
    if not os.path.isdir(folder):
        return []
    return [os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".yaml")]


def _registered():
    """{op: None}: the kernels ExecuTorch's Python runtime registers (its pybindings link the
    optimized library, which falls back to portable kernels)."""
    from executorch.extension.pybindings import portable_lib

    return {operators.kernel_name(n): None for n in portable_lib._get_operator_names()}


def load(spec):
    """A Library from one entry of the config's "kernels" list (see the module doc)."""
    name, files = spec["name"], spec.get("files")
    if spec.get("custom"):
        return Library(name, load_yaml(files, f"kernels {name}"))
    if files is None:
        files = _shipped(name)
    if files:
        return Library(name, load_yaml(files, f"the {name} kernel list"))
    if name == "optimized":
        return Library(name, _registered())
    raise UserError(f"the installed ExecuTorch ships no kernel list for kernels = {name!r}; use "
                    f"\"portable\" or your own list (kernels = [\"portable\", \":my_ops\"])")


def settings(raw):
    """The lowering's config with each kernel list named by its content (file name: sha256)
    instead of its path, for the manifest's inputs record: the same lists give the same record
    whether the toolchain declares them or the action finds them in its venv."""
    from exporter.core import manifest

    resolved = []
    for spec in raw.get("kernels") or DEFAULT_KERNELS:
        files = spec.get("files")
        if files is None and not spec.get("custom"):
            files = _shipped(spec["name"])
        record = {k: v for k, v in spec.items() if k != "files"}
        record["lists"] = {os.path.basename(f): manifest.sha256_file(f) for f in sorted(files or [])}
        resolved.append(record)
    return dict(raw, kernels=resolved)


def used_operators(buffer):
    """{op name: {method-independent set of dtype names}} of a .pte's non-delegated operators,
    read with ExecuTorch's selective-build reader (every method's operator table)."""
    from executorch.codegen.tools.selective_build import (
        _get_io_metadata_for_program_operators,
        _get_program_from_buffer,
    )

    program = _get_program_from_buffer(buffer)
    used = {}
    for op, combos in _get_io_metadata_for_program_operators(program).items():
        dtypes = used.setdefault(operators.kernel_name(op), set())
        for combo in combos:
            dtypes.update(executorch_name(m.dtype) for m in combo if m.kernel_type in _TENSOR_KINDS)
    return used


def _methods_of(program, ops):
    """{op: [method names]}: which methods of the emitted Program call each operator."""
    where = {}
    for plan in program.execution_plan:
        for operator in plan.operators:
            where.setdefault(operators.kernel_name(operator.name, operator.overload), []).append(plan.name)
    return {op: where.get(op, []) for op in ops}


def check(specs, et_program):
    """Raises UserError naming the operators that no library in specs has a kernel for."""
    libraries = [load(spec) for spec in specs]
    runtime = _runtime_ops()
    missing = {}
    for op, dtypes in sorted(used_operators(et_program.buffer).items()):
        if op in runtime or op.startswith("executorch_prim::"):
            continue
        if not any(library.covers(op, dtypes) for library in libraries):
            missing[op] = dtypes
    if missing:
        raise UserError(message(missing, libraries, _methods_of(et_program.executorch_program, missing)))


def _build_value(names):
    """How BUILD files write kernels = ...: "portable", or ["portable", "//ops:my_ops.yaml"]."""
    quoted = [f'"{name}"' for name in names]
    return quoted[0] if len(quoted) == 1 else "[" + ", ".join(quoted) + "]"


def message(missing, libraries, methods):
    """The one-line error for operators without a kernel, with the fixes to offer."""
    names = [library.name for library in libraries]
    listed = []
    for op, dtypes in missing.items():
        listed_for = [sorted(set().union(*library.kernels[op])) for library in libraries if library.kernels.get(op)]
        typed = f" for {'/'.join(sorted(dtypes))} (listed for {'/'.join(listed_for[0])} only)" if listed_for else ""
        listed.append(f"{op}{typed} (method {', '.join(methods.get(op) or ['?'])})")
    others = []
    for other in BUILTIN:
        if other in names:
            continue
        try:
            library = load({"name": other})
        except UserError:
            continue
        if all(library.covers(op, dtypes) for op, dtypes in missing.items()):
            others.append(other)
    offer = f"use kernels = {_build_value(names + others[:1])}, or " if others else ""
    # Only fixes that hold: another library is offered only if it covers every missing operator,
    # and an app's own list always does. (A delegate or a decomposition may not exist for the
    # operator: XNNPACK takes no avg_pool3d, and torch has no decomposition of it.)
    return (f"no kernel for {', '.join(listed)} in kernels = {_build_value(names)}: the program would "
            f"fail to load on the device (OperatorMissing); {offer}declare the app's own "
            f"kernels in a YAML target in ExecuTorch's functions.yaml format "
            f"(kernels = {_build_value(names + [':my_ops.yaml'])})")
