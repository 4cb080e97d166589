"""Reads the public API of rules/defs.bzl from the .bzl sources: rules, macros, providers, constants.

Starlark's syntax is a subset of Python's, so Python's ast parses .bzl and BUILD files; nothing
is evaluated. Stardoc would do this from Bazel itself, but it is not available offline.
"""

import ast
import dataclasses
import os
import re

# attr.<kind>: the type shown in the docs, and the default when the attr sets none.
ATTR_TYPES = {
    "bool": ("bool", "False"),
    "int": ("int", "0"),
    "int_list": ("list of ints", "[]"),
    "label": ("label", "None"),
    "label_list": ("list of labels", "[]"),
    "label_keyed_string_dict": ("dict of label to string", "{}"),
    "output": ("output file name", "None"),
    "output_list": ("list of output file names", "[]"),
    "string": ("string", '""'),
    "string_dict": ("dict of string to string", "{}"),
    "string_list": ("list of strings", "[]"),
    "string_list_dict": ("dict of string to list of strings", "{}"),
}

# Literal defaults of macro parameters, and the type they imply.
_LITERAL_TYPES = {dict: "dict", list: "list", tuple: "tuple", str: "string", bool: "bool", int: "int", float: "float"}

NAME_DOC = "A unique name for this target."
KWARGS_DOC = "Common attributes passed to the underlying rule: tags, visibility, testonly, ..."
NATIVE_KWARGS_DOC = "Common attributes passed to the native {}: tags, size, timeout, visibility, ..."

# Types of macro parameters that neither a default value nor a rule attr reveals. A parameter
# missing here and not inferable fails the check, and so does a stale entry.
TYPE_HINTS = {
    ("shape_spec", "inputs"): "dict of string to input value",
    ("shape_spec", "hint"): "AUTO, DYNAMIC, STATIC or None",
    ("tensor", "shape"): "list of ints and strings",
    ("tensor", "hint"): "hint, list of hints, or dict of int to hint",
    ("tensor", "fill"): "int, float, bool or None",
    ("dim", "min"): "int or None",
    ("dim", "max"): "int or None",
    ("dim", "example"): "int or None",
    ("graph_snapshot_test", "golden"): "string (a file name in this package)",
    ("numerics_test", "rtol"): "float, string or None",
    ("numerics_test", "atol"): "float, string or None",
    ("calibration_data", "init_args"): "dict of the entry's keyword arguments (JSON values)",
    ("executorch_program", "exported"): "label or None",
    ("executorch_program", "methods"): "dict of method name to label, or None",
    ("executorch_program", "release"): "string or None (the toolchain's release)",
    ("executorch_programs", "release"): "string or None (the toolchain's release)",
    ("numerics_test", "release"): "string or None (the toolchain's release)",
    ("numerics_test", "native_runner"): "label or None (the release's runner)",
    ("llm_generation_test", "release"): "string or None (the toolchain's release)",
    ("executorch_benchmark", "release"): "string or None (the toolchain's release)",
    ("executorch_benchmark", "native_runner"): "label or None (the release's runner)",
    ("executorch_profile", "release"): "string or None (the toolchain's release)",
    ("executorch_profile", "native_runner"): "label or None (the toolchain's runner)",
    ("executorch_program", "kernels"): "string or list of strings and labels",
    ("executorch_program", "metadata"): "dict of string to int, float, bool, string or list of ints",
    ("executorch_program", "initialized_buffers"): "list of strings, or None (every mutated buffer)",
    ("executorch_program", "backends"): "list of strings, or dict of method name to list of strings",
    ("hf_model", "task"): "string",
    ("hf_model", "config"): "dict (a transformers config with its model_type)",
    ("hf_model", "checkpoint_dir"): "list of labels, or None",
    ("hf_model", "inputs"): "dict of string to input value, or None",
    ("hf_model", "max_cache_len"): "int or None",
    ("multimodal_program", "vision_encoder"): "label or None",
    ("multimodal_program", "token_embedding"): "label or None",
    ("multimodal_program", "text_decoder"): "label or None",
    ("multimodal_program", "exported"): "dict of method name to label",
    ("multimodal_program", "quantize"): "string or None",
    ("multimodal_program", "embedding_dim"): "int",
    ("seq2seq_generation_test", "program"): "label",
    ("seq2seq_generation_test", "model"): "label",
    ("llm_program", "max_context_len"): "int or None",
    ("llm_program", "max_seq_len"): "int",
    ("llm_program", "model"): "label",
    ("llm_program", "tokenizer"): "label",
    ("llm_program", "quantize"): "string or None",
    ("llm_program", "embedding_quantize"): "string or None",
    ("llm_program", "llm_ops"): "list of strings or None",
    ("llm_generation_test", "program"): "label",
    ("llm_generation_test", "tokenizer"): "label",
    ("llm_generation_test", "prompts"): "list of strings",
    ("llm_generation_test", "native_runner"): "label or None (the release's runner)",
    ("numerics_test", "steps"): "list of step(...)",
    ("step", "dims"): "dict of dim name to int",
    ("step", "values"): "dict of input name to int, float or bool",
    ("executorch_programs", "variants"): "dict of variant name to dict of attributes",
    ("executorch_programs", "exported"): "label or None",
    ("executorch_programs", "methods"): "dict of method name to label, or None",
    ("executorch_programs", "metadata"): "dict of string to int, bool or string",
    ("executorch_programs", "numerics"): "dict of numerics_test arguments",
    ("numerics_test", "reference"): "\"eager\", \"exported\" or a torch_export label",
    ("numerics_test", "min_sqnr_db"): "float or None",
    ("numerics_test", "min_top1_agreement"): "float or None",
    ("pte_inspect", "program"): "label",
    ("program_budget_test", "max_pte_bytes"): "int or string such as \"48MiB\", or None",
    ("program_budget_test", "max_ptd_bytes"): "int or string such as \"48MiB\", or None",
    ("program_budget_test", "max_planned_bytes"): "dict of method name to int or string such as \"20MiB\"",
    ("program_budget_test", "max_growth_percent"): "int, float or None",
    ("program_budget_test", "min_npu_fraction"): "int, float or string from 0 to 1, or None",
    ("program_budget_test", "max_estimated_ms"): "int, float or None",
    ("program_budget_test", "max_sram_bytes"): "int or string such as \"64KiB\", or None",
    ("program_budget_test", "max_flash_bytes"): "int or string such as \"256KiB\", or None",
    ("program_budget_test", "max_instructions"): "dict of method name to int or string such as \"40M\"",
    ("numerics_test", "fvp_runner"): "label or None",
    ("program_budget_test", "golden"): "string (a file name in this package) or None",
    ("bundled_program", "inputs"): "list of dicts of dim name to int, or dict of method name to such lists",
    ("bundled_program_test", "rtol"): "float, string or None",
    ("bundled_program_test", "atol"): "float, string or None",
    ("lora_model", "alpha"): "int or float",
    ("lora_model", "checkpoint"): "label or None",
    ("lora_model", "checkpoint_dir"): "list of labels",
    ("lora_model", "target_modules"): "list of strings",
    ("lora_model", "base"): "label",
    ("lora_model", "rank"): "int",
    ("foundation_budget_test", "foundation"): "label",
    ("foundation_budget_test", "programs"): "dict of label to label",
    ("foundation_budget_test", "max_ratio"): "float or string",
    ("torch_export_toolchain_repositories", "lock"): "label or None",
    ("torch_export_toolchain_repositories", "aarch64_pin"): "label or None",
}


class DocError(Exception):
    """The sources cannot be documented as they are; the message says where and why."""


@dataclasses.dataclass
class Param:
    name: str
    type: str
    default: str  # source text; "required" for mandatory ones
    doc: str
    from_rule: str = ""  # the rule whose attr this macro parameter passes through


@dataclasses.dataclass
class Entry:
    name: str
    kind: str  # "rule", "macro", "provider" or "constant"
    doc: str
    source: str  # workspace-relative .bzl path
    params: list = dataclasses.field(default_factory=list)
    value: str = ""  # constants only


def _string(node, where):
    """The value of a string literal, or of literals joined with +."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _string(node.left, where) + _string(node.right, where)
    raise DocError(f"{where}: expected a string literal, found {ast.dump(node)[:80]}")


def _keywords(call):
    return {k.arg: k.value for k in call.keywords if k.arg}


def _call_name(node):
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return node.func.id
        if isinstance(node.func, ast.Attribute):
            return node.func.attr
    return None


class Module:
    """One parsed .bzl file: its top-level assignments, functions and loads."""

    def __init__(self, root, path):
        self.root, self.path = root, path
        with open(os.path.join(root, path), encoding="utf-8") as f:
            self.text = f.read()
        self.tree = ast.parse(self.text, filename=path)
        self.assigns, self.functions, self.loads = {}, {}, {}
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.assigns[node.targets[0].id] = node
            elif isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and _call_name(node.value) == "load":
                label = _string(node.value.args[0], f"{path}: load")
                for k in node.value.keywords:
                    self.loads[k.arg] = (label, _string(k.value, f"{path}: load"))
                for a in node.value.args[1:]:
                    name = _string(a, f"{path}: load")
                    self.loads[name] = (label, name)

    def segment(self, node):
        return ast.get_source_segment(self.text, node)

    def comment_above(self, node):
        """The # comment block right above a top-level statement, joined into one paragraph."""
        lines = self.text.splitlines()[: node.lineno - 1]
        block = []
        while lines and lines[-1].lstrip().startswith("#"):
            block.insert(0, lines.pop().lstrip()[1:].strip())
        return " ".join(block)


def label_to_path(label, current):
    """//rules/private/lib:x.bzl -> rules/private/lib/x.bzl; :x.bzl is relative to `current`."""
    if label.startswith("@"):
        raise DocError(f"{current}: loads {label} from another repository; document it there")
    if label.startswith(":"):
        return os.path.join(os.path.dirname(current), label[1:])
    package, _, name = label[2:].partition(":")
    return os.path.join(package, name) if package else name


def _split_docstring(text):
    """(description, {arg: doc}) from a Google-style docstring with an Args: section."""
    text = text or ""
    lines = text.splitlines()
    description, current, section = [], None, None
    args: dict[str, list] = {}  # arg -> [its text, its indent]
    for line in lines:
        stripped = line.strip()
        if stripped in ("Args:", "Returns:", "Raises:"):
            section, current = stripped, None
            continue
        if section == "Args:":
            match = re.match(r"^(\*{0,2}\w+): ?(.*)$", stripped)
            indent = len(line) - len(line.lstrip())
            if match and (current is None or indent <= int(args[current][1])):
                current = match.group(1)
                args[current] = [match.group(2), indent]
            elif current and stripped:
                args[current][0] += " " + stripped
            continue
        if section is None:
            description.append(line)
    return "\n".join(description).strip(), {k: v[0].strip() for k, v in args.items()}


def _mentions(text, name):
    return re.search(r"(?<![\w.])" + re.escape(name) + r"(?!\w)", text) is not None


def _evaluate(module, node, where, env=None):
    """The value of a constant expression: literals, and names bound at the top level here or in
    a loaded file, subscripts of them and list comprehensions over them (the rules take their
    allowed values and defaults from the generated exporter_facts.bzl)."""
    env = env or {}
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.Name) and node.id in module.assigns:
        return _evaluate(module, module.assigns[node.id].value, where)
    if isinstance(node, ast.Name) and node.id in module.loads:
        label, original = module.loads[node.id]
        other = Module(module.root, label_to_path(label, module.path))
        return _evaluate(other, ast.Name(id=original, ctx=ast.Load()), where)
    if isinstance(node, ast.Subscript):
        return _evaluate(module, node.value, where, env)[_evaluate(module, node.slice, where, env)]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_evaluate(module, e, where, env) for e in node.elts]
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_evaluate(module, k, where, env): _evaluate(module, v, where, env) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.ListComp) and len(node.generators) == 1:
        loop = node.generators[0]
        if isinstance(loop.target, ast.Name) and not loop.ifs:
            name = loop.target.id
            return [_evaluate(module, node.elt, where, dict(env, **{name: item}))
                    for item in _evaluate(module, loop.iter, where, env)]
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise DocError(f"{where}: expected a constant, found {module.segment(node)[:60]}") from None


def _default_text(module, node, where):
    """A default as the docs show it: a literal as written; a constant the file computes (say,
    from exporter_facts.bzl) by its value; anything else (a Label(...)) as written."""
    try:
        ast.literal_eval(node)
        return module.segment(node)
    except ValueError:
        pass
    try:
        value = _evaluate(module, node, where)
    except DocError:
        return module.segment(node)
    return repr(value).replace("'", '"')


def _attr_items(module, node, where):
    """(key node, attr node, module) of every attr that a rule's `attrs` expression holds.

    `attrs` may be a dict literal; a name bound to one, here or in a loaded module; or a call
    (dict(...) or a helper such as config_test_attrs(own, SHARED)) whose arguments are such
    dicts: the attrs shared through the helper's body are not read, only its arguments.
    """
    if isinstance(node, ast.Dict):
        if None in node.keys:
            raise DocError(f"{where}: attrs uses ** inside a dict literal; write dict(a, **b) instead")
        return [(k, v, module) for k, v in zip(node.keys, node.values)]
    if isinstance(node, ast.Name):
        if node.id in module.assigns:
            return _attr_items(module, module.assigns[node.id].value, where)
        if node.id in module.loads:
            label, original = module.loads[node.id]
            other = Module(module.root, label_to_path(label, module.path))
            return _attr_items(other, ast.Name(id=original, ctx=ast.Load()), where)
        raise DocError(f"{where}: attrs names {node.id}, which {module.path} neither defines nor loads")
    if isinstance(node, ast.Call):
        items = []
        for arg in node.args:
            value = arg.value if isinstance(arg, ast.Starred) else arg
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                items += _attr_items(module, value, where)
        for k in node.keywords:
            if k.arg is None:
                items += _attr_items(module, k.value, where)
            elif _call_name(node) == "dict":
                items.append((ast.Constant(value=k.arg), k.value, module))
        return items
    raise DocError(f"{where}: attrs must be a dict literal, a name bound to one, or a call that merges such dicts, "
                   f"to be documented")


def _rule_params(module, call, where):
    kw = _keywords(call)
    attrs_node = kw.get("attrs")
    if attrs_node is None:
        return []
    params = []
    for key, value, source in _attr_items(module, attrs_node, where):
        name = _string(key, where)
        if name.startswith("_"):
            continue  # private attrs: implicit dependencies, not for users
        kind = value.func.attr if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) else None
        if kind not in ATTR_TYPES:
            raise DocError(f"{where}: attr {name!r} is attr.{kind}, which the doc generator does not know")
        type_name, implicit_default = ATTR_TYPES[kind]
        akw = _keywords(value)
        if "allow_single_file" in akw:
            type_name = "label (one file)"
        elif "allow_files" in akw and kind == "label_list":
            type_name = "list of labels (files)"
        mandatory = isinstance(akw.get("mandatory"), ast.Constant) and akw["mandatory"].value is True
        default = "required" if mandatory else (
            _default_text(source, akw["default"], where) if "default" in akw else implicit_default)
        doc = _string(akw["doc"], f"{where}: attr {name!r} doc") if "doc" in akw else ""
        if "values" in akw:
            doc += " One of: " + ", ".join(f'`"{v}"`' for v in _evaluate(source, akw["values"], where)) + "."
        params.append(Param(name, type_name, default, doc.strip()))
    return params


# What defines a rule: rule() itself, and config_test.bzl's config_test_rule(), which calls it
# with test = True and the Python toolchain.
RULE_FUNCTIONS = ("rule", "config_test_rule")


def _rule_calls(module, function):
    """Calls in a macro's body of rules defined in the same module: (rule name, call)."""
    found = []
    for node in ast.walk(function):
        name = _call_name(node)
        if name in module.assigns and _call_name(module.assigns[name].value) in RULE_FUNCTIONS:
            found.append((name, node))
    return found


def _native_kwargs_target(function, kwarg):
    """The native rule (py_test, py_binary, ...) that a macro passes its **kwargs to, if any."""
    for node in ast.walk(function):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "native"):
            for k in node.keywords:
                if k.arg is None and kwarg in ast.dump(k.value):
                    return node.func.attr
    return None


def _is_name(node, name):
    return name is not None and isinstance(node, ast.Name) and node.id == name


def _helper_sets(module, name):
    """The keywords of the dict(...) a helper function returns: the attrs it sets itself."""
    if name in module.loads:
        label, original = module.loads[name]
        return _helper_sets(Module(module.root, label_to_path(label, module.path)), original)
    function = module.functions.get(name)
    returns = [n.value for n in ast.walk(function) if isinstance(n, ast.Return)] if function else []
    return [k.arg for r in returns if isinstance(r, ast.Call) and _call_name(r) == "dict" for k in r.keywords if k.arg]


def _rule_attrs(module, function):
    """({macro parameter: (rule name, Param)} of parameters passed to a rule attr of the same name,
    [Param] of the rule attrs a user sets through the macro's **kwargs)."""
    args_kwarg = function.args.kwarg.arg if function.args.kwarg else None
    rule_attrs = {}  # attr name -> (rule name, Param), for parameters a macro passes through
    passthrough = []  # the rule's attrs a user sets through **kwargs
    for rule_name, call in _rule_calls(module, function):
        params = {p.name: p for p in _rule_params(module, module.assigns[rule_name].value, f"{module.path}: {rule_name}")}
        explicit = _keywords(call)
        for attr, value in explicit.items():
            if isinstance(value, ast.Name) and attr in params:
                rule_attrs[value.id] = (rule_name, params[attr])
        # The macro's own **kwargs reach this rule, directly or through a helper that adds the
        # attrs it computes (**program_attrs(..., **kwargs)); not a helper's dict it sets itself.
        reaching = any(_is_name(k.value, args_kwarg) for k in call.keywords if k.arg is None)
        for helper in [k.value for k in call.keywords if k.arg is None and isinstance(k.value, ast.Call)]:
            if any(_is_name(k.value, args_kwarg) for k in helper.keywords if k.arg is None):
                reaching = True
                explicit.update({k.arg: k.value for k in helper.keywords if k.arg})
                explicit.update(dict.fromkeys(_helper_sets(module, _call_name(helper))))
        if args_kwarg and reaching:
            for name, p in params.items():
                if name not in explicit and name != "name":
                    passthrough.append(dataclasses.replace(p, from_rule=rule_name))
    return rule_attrs, passthrough


def _macro(module, function, public_name):
    where = f"{module.path}: {function.name}"
    description, arg_docs = _split_docstring(ast.get_docstring(function))
    rule_attrs, passthrough = _rule_attrs(module, function)
    args = function.args
    positional = args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
    params = []
    for arg, default in pairs:
        name = arg.arg
        doc = arg_docs.get(name, "")
        if not doc and name == "name":
            doc = NAME_DOC
        if not doc and _mentions(description, name):
            doc = "See the description above."
        type_name = TYPE_HINTS.get((public_name, name), "")
        if type_name:
            pass
        elif name == "name":
            type_name = "name"
        elif name in rule_attrs:
            type_name = rule_attrs[name][1].type
            doc = doc or rule_attrs[name][1].doc
        elif default is not None:
            try:
                value = _evaluate(module, default, where)
                type_name = _LITERAL_TYPES.get(type(value), "")
            except DocError:
                pass
        params.append(Param(
            name, type_name, "required" if default is None else _default_text(module, default, where), doc,
        ))
    params += passthrough
    if args.kwarg:
        doc = arg_docs.get("**" + args.kwarg.arg) or arg_docs.get(args.kwarg.arg) or ""
        if not doc and passthrough:
            doc = KWARGS_DOC
        native = _native_kwargs_target(function, args.kwarg.arg)
        if not doc and native:
            doc = NATIVE_KWARGS_DOC.format(native)
        params.append(Param("**" + args.kwarg.arg, "attributes", "", doc))
    if not description:
        raise DocError(f"{where}: has no docstring")
    return Entry(public_name, "macro", description, module.path, params)


def _provider(module, call, public_name):
    where = f"{module.path}: {public_name}"
    kw = _keywords(call)
    if "doc" not in kw:
        raise DocError(f"{where}: provider() has no doc")
    fields = kw.get("fields")
    params = []
    if isinstance(fields, ast.Dict):
        for key, value in zip(fields.keys, fields.values):
            params.append(Param(_string(key, where), "", "", _string(value, where)))
    elif fields is not None:
        raise DocError(f"{where}: fields must be a dict of field name to doc")
    return Entry(public_name, "provider", _string(kw["doc"], where), module.path, params)


def _resolve(root, modules, path, name, public_name, context):
    """The Entry for `name` as defined in `path`, following loads and plain aliases."""
    if path not in modules:
        modules[path] = Module(root, path)
    module = modules[path]
    if name in module.functions:
        return _macro(module, module.functions[name], public_name)
    if name in module.loads:
        label, original = module.loads[name]
        return _resolve(root, modules, label_to_path(label, path), original, public_name, context)
    if name not in module.assigns:
        raise DocError(f"{path}: {context} names {name!r}, which {path} does not define")
    value = module.assigns[name].value
    kind = _call_name(value)
    if kind in ("rule", "repository_rule"):
        kw = _keywords(value)
        if "doc" not in kw:
            raise DocError(f"{path}: rule {name} has no doc")
        return Entry(public_name, "rule", _string(kw["doc"], f"{path}: {name}"), path,
                     _rule_params(module, value, f"{path}: {name}"))
    if kind == "provider":
        return _provider(module, value, public_name)
    if isinstance(value, ast.Name):
        return _resolve(root, modules, path, value.id, public_name, context)
    if isinstance(value, ast.Constant) or (
            isinstance(value, ast.List) and all(isinstance(e, ast.Constant) for e in value.elts)):
        return Entry(public_name, "constant", "", path, value=repr(ast.literal_eval(value)).replace("'", '"'))
    raise DocError(f"{path}: cannot document {name} = {module.segment(value)[:60]}")


def module_api(root, path, kinds=("rule", "macro")):
    """The public (not _-prefixed) rules and functions that a .bzl file defines itself."""
    modules = {path: Module(root, path)}
    module = modules[path]
    names = [n for n in module.functions if not n.startswith("_")]
    names += [n for n, node in module.assigns.items()
              if not n.startswith("_") and _call_name(node.value) in ("rule", "repository_rule")]
    entries = [_resolve(root, modules, path, n, n, path) for n in names]
    return [e for e in entries if e.kind in kinds]


def public_api(root, defs="rules/defs.bzl"):
    """Every public name of defs.bzl as an Entry, in the order defs.bzl binds them."""
    modules = {}
    module = Module(root, defs)
    modules[defs] = module
    entries = []
    for name, node in module.assigns.items():
        if name.startswith("_"):
            continue
        entry = _resolve(root, modules, defs, name, name, f"{defs}: {name}")
        if entry.kind == "constant":
            entry.doc = module.comment_above(node)
        entries.append(entry)
    # Constants bound one after another share the comment above the first.
    for previous, entry in zip(entries, entries[1:]):
        if entry.kind == "constant" and previous.kind == "constant" and not entry.doc:
            entry.doc = previous.doc
    return module, entries


def missing_docs(entries):
    """Sentences naming every public rule, macro, provider, attr, parameter or field without a
    doc, every macro parameter without a type, and every stale TYPE_HINTS entry."""
    problems = []
    params = {(e.name, p.name) for e in entries for p in e.params}
    for key in sorted(set(TYPE_HINTS) - params):
        problems.append(f"tools/docgen/bzl_docs.py: TYPE_HINTS names {key[0]}'s parameter {key[1]}, which no longer "
                        f"exists; remove it")
    for e in entries:
        for p in e.params:
            if e.kind == "macro" and not p.type:
                problems.append(f"macro {e.name}: parameter {p.name} has no known type; add it to TYPE_HINTS in "
                                f"tools/docgen/bzl_docs.py")
        if not e.doc:
            problems.append(f"{e.kind} {e.name} ({e.source}) has no doc")
        for p in e.params:
            if not p.doc:
                what = {"provider": "field", "rule": "attr"}.get(e.kind, "parameter")
                problems.append(f"{e.kind} {e.name}: {what} {p.name} has no doc ({p.from_rule or e.source})")
    return problems
