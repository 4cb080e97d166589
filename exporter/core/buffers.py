"""Mutable buffers: the state a program keeps between calls (a KV cache, a step counter).

torch.export's training IR keeps a buffer's mutation as an in-place call in the graph
(`index_copy_` on `b_k_cache`); the functional IRs list it in the signature's
buffers_to_mutate. ExecuTorch lowers both into a buffer that persists between calls of the
loaded method, and (in a program of several methods) that every method shares, when
`share_mutable_buffers` plans it once for all of them.

Its initial value is another matter: ExecuTorch serialises only the shape and dtype of a
mutated buffer, unless its placeholder carries meta["et_init_buffer"]; the runtime then starts
from whatever memory the app provides (zeros in ExecuTorch's Python runtime and Module API,
anything in an app's own arena). The rules keep every mutated buffer's initial value by
default, so that a program computes what the model computes from its first call
(docs/stateful.md); `initialized_buffers` on executorch_program lists the ones to keep instead.
"""

import torch

from exporter.core.errors import UserError, fix

# Operators whose mutation of a buffer ExecuTorch cannot plan: they change its size or storage.
_RESHAPING_OPS = ("aten.resize_", "aten.set_", "aten.as_strided_")


def _mutated_args(node):
    """The argument nodes an in-place call writes to (its schema's `Tensor(a!)` arguments)."""
    schema = getattr(node.target, "_schema", None)
    if node.op != "call_function" or schema is None:
        return []
    written = []
    for index, argument in enumerate(schema.arguments):
        if argument.alias_info is None or not argument.alias_info.is_write:
            continue
        value = node.args[index] if index < len(node.args) else node.kwargs.get(argument.name)
        if isinstance(value, torch.fx.Node):
            written.append(value)
    return written


def _is_view(node):
    schema = getattr(node.target, "_schema", None)
    return (node.op == "call_function" and schema is not None and schema.returns
            and schema.returns[0].alias_info is not None and not schema.returns[0].alias_info.is_write
            and bool(node.args) and isinstance(node.args[0], torch.fx.Node))


def _base(node):
    """The node a chain of views starts from (self.k_cache[0].t() -> the k_cache placeholder)."""
    while _is_view(node):
        node = node.args[0]
    return node


def mutations(ep):
    """{buffer name: sorted operator names that mutate it} for one ExportedProgram.

    In-place calls come from the training IR's graph (through views); a functional graph's
    mutations come from its signature, where the operator is the one producing the new value.
    """
    signature = ep.graph_signature
    found = {}
    for node in ep.graph.nodes:
        for written in _mutated_args(node):
            buffer = signature.inputs_to_buffers.get(_base(written).name)
            if buffer is not None:
                found.setdefault(buffer, set()).add(str(node.target))
    outputs = {n.name: n for n in ep.graph.output_node().args[0] if isinstance(n, torch.fx.Node)}
    for output_name, buffer in signature.buffers_to_mutate.items():
        producer = outputs.get(output_name)
        op = str(producer.target) if producer is not None and producer.op == "call_function" else "copy"
        found.setdefault(buffer, set()).add(op)
    return {name: sorted(ops) for name, ops in sorted(found.items())}


def mutated_constants(ep):
    """{constant name: sorted operators that write to it in place}: tensors the model reaches
    outside its registered buffers (through a plain object, as Hugging Face's StaticCache keeps
    its tensors), which non-strict export lifts as constants (lifted_tensor_0, ...)."""
    constants = ep.graph_signature.inputs_to_lifted_tensor_constants
    found = {}
    for node in ep.graph.nodes:
        for written in _mutated_args(node):
            name = constants.get(_base(written).name)
            if name is not None:
                found.setdefault(name, set()).add(str(node.target))
    return {name: sorted(ops) for name, ops in sorted(found.items())}


def _state_tensors(ep):
    tensors = dict(ep.state_dict)
    tensors.update({k: v for k, v in ep.constants.items() if isinstance(v, torch.Tensor)})
    return tensors


def _shares_memory(a, b):
    if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
        return False
    return a.untyped_storage().nbytes() > 0


def diagnose(ep, method, context):
    """The one-line reason a program's buffer mutations cannot lower, or None.

    Called when lowering failed: ExecuTorch's own error for these cases names neither the
    buffer nor the operator (an AOTAutograd assertion, or a Core ATen violation for the
    as_strided_scatter that functionalisation writes).
    """
    for name, ops in mutated_constants(ep).items():
        fixes = [fix("write_registered_buffer", "write to a registered buffer itself (register_buffer, then "
                                                "self.<buffer>.index_copy_(...))")]
        if not context.strict:
            fixes.insert(0, fix("strict_true", f"set strict = True on torch_export {context.exported_text} "
                                               f"(on the llm_program or multimodal_program that declares it, if "
                                               f"one does: TorchDynamo finds the registered buffer behind such a "
                                               f"tensor)"))
        return (f"{context.exported_text} (method {method}) writes in place ({ops[0]}) to a tensor that the "
                f"model reaches outside its registered buffers, which export made the constant {name!r}, and "
                f"ExecuTorch's decompositions cannot keep a write to a constant (\"expected compiled_fn to be "
                f"GraphModule\"); {', or '.join(fixes)}")
    mutated = mutations(ep)
    if not mutated:
        return None
    head = f"{context.exported_text} (method {method}) mutates buffer"
    for name, ops in mutated.items():
        reshaping = [op for op in ops if op.startswith(_RESHAPING_OPS)]
        if reshaping:
            return (f"{head} {name!r} with {reshaping[0]}, which changes its size or storage, and "
                    f"ExecuTorch plans a buffer once, at a fixed size; "
                    + fix("buffer_final_size", "register the buffer at its final size and write into it (copy_, "
                                               "index_copy_) instead"))
    tensors = _state_tensors(ep)
    for name, ops in mutated.items():
        tensor = tensors.get(name)
        others = sorted(other for other, t in tensors.items()
                        if other != name and tensor is not None and _shares_memory(tensor, t))
        if others:
            return (f"{head} {name!r} with {ops[0]}, and it shares memory with {others[0]!r} (one "
                    f"is a view of the other), which ExecuTorch cannot functionalise; "
                    + fix("separate_buffer", f"register {name!r} as a tensor of its own (e.g. register_buffer("
                                             f"{name.split('.')[-1]!r}, t.clone())) or mutate {others[0]!r} itself"))
    return None


def _matches(buffer, names):
    """A listed name matches a buffer by its full name or its trailing parts ("k_cache")."""
    return any(buffer == n or buffer.endswith("." + n) for n in names)


def mark_initialized(edge, wanted, label):
    """Marks the mutated buffers whose initial value the program keeps (all when wanted is
    None); returns {buffer name: record} for the manifest, or {} if no method mutates one."""
    found = {}
    for method in sorted(edge.methods):
        ep = edge.exported_program(method)
        mutated = set(ep.graph_signature.buffers_to_mutate.values())
        for node in ep.graph.nodes:
            buffer = ep.graph_signature.inputs_to_buffers.get(node.name) if node.op == "placeholder" else None
            if buffer not in mutated:
                continue
            keep = wanted is None or _matches(buffer, wanted)
            if keep:
                node.meta["et_init_buffer"] = True
            value = ep.state_dict.get(buffer, ep.constants.get(buffer))
            record = found.setdefault(buffer, {
                "dtype": str(value.dtype).replace("torch.", ""),
                "shape": list(value.shape),
                "bytes": value.numel() * value.element_size(),
                "initialized": keep,
                "methods": [],
            })
            record["methods"].append(method)
    unknown = [n for n in (wanted or []) if not any(_matches(b, [n]) for b in found)]
    if unknown:
        raise UserError(
            f"executorch_program {label}: initialized_buffers names {unknown[0]!r}, which no method "
            f"of the program mutates; list buffers it mutates ({', '.join(found) or 'none'}), by "
            f"full name or last part, or remove it")
    return found
