"""A model's outputs as data: the containers torch.export can save and load by itself, and the
outputs' names.

A forward may return a pytree of any registered container: transformers' ModelOutput, a
dataclass, a named tuple. torch.export records the container's class in the program's output
spec, and loading the .pt2 then needs that class registered, which means importing the module
that a file names: code execution decided by a file in the cache. So the export rewrites each
such container as a dict of the same keys, in the same order. The graph and its flat outputs
do not change, a loaded program imports nothing, and `ep.module()` returns dicts where the model
returned ModelOutputs. Tuples, lists and dicts stay as they are, so programs that return them
keep their bytes.

Output names are the leaves' key paths: "logits", "hidden_states[0]", "boxes.scores"; a
program whose paths are only indices ([0], [1]) or a single tensor has none.
"""

import torch
import torch.utils._pytree as pytree

# Containers that torch.export serialises without knowing a class (None is a node with no leaves).
_PLAIN = (tuple, list, dict, type(None))


def _placeholder_tree(spec):
    """An instance of spec's tree whose leaves are empty tensors (ModelOutput wants tensors)."""
    return pytree.tree_unflatten([torch.empty(0) for _ in range(spec.num_leaves)], spec)


def _key_name(key):
    """The name of one step of a key path: a dict key, an attribute, or an index."""
    if isinstance(key, pytree.MappingKey):
        return str(key.key)
    if isinstance(key, pytree.GetAttrKey):
        return key.name
    if isinstance(key, pytree.SequenceKey):
        return key.idx
    return str(key)


def _keyed_children(spec):
    """[(key name, child spec)] of a non-plain node, by its registered flatten_with_keys, or None
    when its class registered none."""
    node = pytree.SUPPORTED_NODES.get(spec.type)
    if node is None or node.flatten_with_keys_fn is None:
        return None
    keyed, _ = node.flatten_with_keys_fn(_placeholder_tree(spec))
    names = [_key_name(key) for key, _ in keyed]
    return list(zip(names, spec.children()))


def plain(spec):
    """spec with every container that is not a tuple, list or dict rewritten as a dict of the
    same keys (a tuple, when its class gives no keys); returns spec itself when nothing changes."""
    if spec.is_leaf():
        return spec
    children = [plain(child) for child in spec.children()]
    if spec.type in _PLAIN:
        changed = any(new is not old for new, old in zip(children, spec.children()))
        return pytree.TreeSpec(spec.type, spec.context, children) if changed else spec
    keyed = _keyed_children(spec)
    if keyed is None:
        return pytree.TreeSpec(tuple, None, children)
    return pytree.TreeSpec(dict, [str(name) for name, _ in keyed], children)


def container_names(spec):
    """The qualified names of the classes plain() rewrites, in tree order (for the manifest)."""
    found = []
    if not spec.is_leaf():
        if spec.type not in _PLAIN:
            # A named tuple's node type is pytree's marker; its class is the context.
            cls = spec.context if isinstance(spec.context, type) else spec.type
            found.append(f"{cls.__module__}.{cls.__qualname__}")
        for child in spec.children():
            found += [name for name in container_names(child) if name not in found]
    return found


def _path_name(path):
    text = ""
    for key in path:
        name = _key_name(key)
        text += f"[{name}]" if isinstance(name, int) else (f".{name}" if text else name)
    return text


def names(spec):
    """The leaves' names in output order, or None when no leaf has a named key."""
    if spec.is_leaf():
        return None
    paths = [path for path, _ in pytree.tree_flatten_with_path(_placeholder_tree(spec))[0]]
    if not any(isinstance(_key_name(key), str) for path in paths for key in path):
        return None
    return [_path_name(path) for path in paths]


def out_spec(ep):
    """The program's output spec (the module call graph's root signature), or None."""
    call_spec = getattr(ep, "call_spec", None)
    return getattr(call_spec, "out_spec", None)


def make_plain(ep):
    """Rewrites ep's output spec in place with plain(); returns the classes it replaced."""
    signature = ep._module_call_graph[0].signature
    replaced = container_names(signature.out_spec)
    if replaced:
        signature.out_spec = plain(signature.out_spec)
    return replaced


def program_names(ep):
    """The user outputs' names of an exported program, or None (see names())."""
    spec = out_spec(ep)
    return names(spec) if spec is not None else None
