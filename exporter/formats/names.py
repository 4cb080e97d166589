"""The names and strings of a .pt2 that torch writes into Python code of its own, which it then
runs, checked against what torch writes before torch reads the archive.

Read in torch 2.13's sources, a loaded program becomes Python source in these places:
- torch/fx/graph.py, CodeGen._gen_python_code: a placeholder's target (a graph input's name, as
  torch.export.load gives it: _export/serde/serialize.py, deserialize_graph) goes into
  `def forward(self, <name>, ...)` and `<name> = <target>` as it is, when torch.export.load
  builds the GraphModule (a name `x=<code>` runs the code at once); a get_attr's target (a
  parameter's, buffer's or constant's name, FQN) goes into `getattr(self, "<segment>")` for each
  segment that is no identifier; a call's keyword names into `<name> = <value>`. Other node names
  fx makes into identifiers itself (graph._Namespace), and values it writes with repr().
- torch/fx/graph.py, _PyTreeCodeGen (ExportedProgram.module()): the forward's argument names
  (module_call_graph's forward_arg_names) into `def forward(self, <names>)` and the keyword
  arguments' names (the in_spec's dict of keywords) into `{'<name>': <name>}`.
- torch/export/_unlift.py (ExportedProgram.module()'s guards, exec'd):
  _get_input_guards_for_graph writes a string input (its value in the graph's inputs; the
  constant input spec's copy reaches no code) into `L['<input>'] == '<string>'`, and
  _convert_guards_code_to_fn writes each input's path, its dict keys by repr(), into
  `"Guard failed: <path>..."`, inside double quotes; the paths come from the sample inputs.
  (The program's own guards_code: expressions.py.)

So names must be what torch writes: value, input and keyword names identifiers (a positional
argument of a higher-order operator has the name ""), FQNs identifiers or digits joined by dots,
and strings torch writes between quotes without a quote, a backslash or a control character.
"""

import json
import re

from exporter.core.errors import BadFile

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A module's path: nn.Sequential's children are digits; module_call_graph's "@<n>" is a call after the first.
_FQN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|[0-9]+)(\.([A-Za-z_][A-Za-z0-9_]*|[0-9]+))*(@[0-9]+)?")
_QUOTABLE = re.compile(r"[^'\"\\\x00-\x1f\x7f]*")

# The fields of torch 2.13's serialized program (_export/serde/schema.py) that hold names.
_IDENTIFIER_FIELDS = ("name", "as_name", "user_input_name")
_FQN_FIELDS = ("parameter_name", "buffer_name", "tensor_constant_name", "custom_obj_name", "fqn")


class _Refused(Exception):
    """A name or string torch would write into code, and does not write itself."""


def _expect(pattern, value, what, empty_ok=False):
    if not isinstance(value, str) or not (pattern.fullmatch(value) or (empty_ok and value == "")):
        raise _Refused(f"{what} {repr(value)[:120]}")


def is_quotable(text):
    """Whether torch may write text between quotes as it is: no quote, backslash or control character."""
    return isinstance(text, str) and bool(_QUOTABLE.fullmatch(text))


def _check_object(obj):
    """json.loads' object_hook: refuses an object whose names torch would not write."""
    for field in _IDENTIFIER_FIELDS:
        if field in obj:
            _expect(_IDENTIFIER, obj[field], f"the {field}", empty_ok=field == "name")
    for field in _FQN_FIELDS:
        if field in obj:
            _expect(_FQN, obj[field], f"the {field}", empty_ok=field == "fqn")
    for argument in (obj.get("inputs") or []) if "nodes" in obj else []:  # a graph's inputs
        if isinstance(argument, dict) and "as_string" in argument:
            _expect(_QUOTABLE, argument["as_string"], "the string input")
    if "forward_arg_names" in obj:
        for name in obj["forward_arg_names"] or []:
            _expect(_IDENTIFIER, name, "the forward's argument name")
    if isinstance(obj.get("in_spec"), str):
        _check_in_spec(obj["in_spec"])
    return obj


def _check_in_spec(text):
    """The forward's inputs' tree (torch.utils._pytree.treespec_dumps): keyword names are
    identifiers, every other dict key is quotable."""
    try:
        spec = json.loads(text)[1]
    except (ValueError, TypeError, IndexError, KeyError):
        return  # no tree: torch's reader refuses it itself
    children = spec.get("children_spec") if isinstance(spec, dict) else None
    keywords = children[1] if spec.get("type") == "builtins.tuple" and isinstance(children, list) and len(children) == 2 else None
    stack = [spec]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        if node.get("type") == "builtins.dict" and isinstance(node.get("context"), str):
            for key in json.loads(node["context"]) or []:
                if node is keywords:
                    _expect(_IDENTIFIER, key, "the keyword argument's name")
                elif isinstance(key, str):
                    _expect(_QUOTABLE, key, "the input's dict key")
        stack.extend(node.get("children_spec") or [])


def check_program(raw, entry, path):
    """Refuses a .pt2's program (models/<name>.json) holding a name or string that torch would
    write into Python code and does not write itself."""
    try:
        json.loads(raw, object_hook=_check_object)
    except _Refused as e:
        raise BadFile(f"{path}: refused: entry {entry} holds {e}, which torch does not write; torch would write "
                      f"it into Python code it runs") from None
    except (ValueError, UnicodeDecodeError, RecursionError, TypeError, AttributeError) as e:
        raise BadFile(f"{path}: entry {entry} is not a program torch writes: {str(e)[:200]}") from None


def check_sample_inputs(value, entry, path):
    """Refuses sample inputs (data/sample_inputs/<model>.pt, already unpickled weights-only)
    with a dict key torch would write between quotes into a guard's message."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in item:
                if isinstance(key, str) and not is_quotable(key):
                    raise BadFile(f"{path}: refused: entry {entry} holds the input's dict key {repr(key)[:120]}, "
                                  f"which torch does not write; torch would write it into Python code it runs")
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
