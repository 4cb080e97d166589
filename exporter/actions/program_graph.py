"""What a program's report draws, read from the lowering while it is in memory: each method's
graph (operators outside delegates, and each delegate's operators inside its partition), every
tensor's shape, dtype and module, the weights, and the memory plan with each tensor's lifetime.

The .pte keeps none of this once it is written: a delegate is an opaque payload, and the module
paths and shapes of its operators stay in the lowering. ExecuTorch's devtools read the same
objects (backend_debug.get_delegation_info counts delegated nodes by name, without backend;
activation_memory_profiler spreads the same TensorSpecs over time steps for a Chrome trace);
this record keeps each node once, with its partition's backend and each tensor's lifetime.

Shapes use the shape_spec's dim names where the spec names the symbol (`batch`), else torch's
symbol; `max` holds the upper bound of each size. Nothing here depends on the machine or the
process: names, ops and integers only.
"""

import sympy
import torch

from exporter.core import symbols

FORMAT = "rules_torch_export/program-graph/1"

# Arguments that name where an out-variant writes, not what it reads.
_OUT_ARGS = ("out", "out0", "out1", "out2", "out3")


def op_name(target):
    """'aten.convolution.out', 'aten.linear.default' (an edge operator is named as its ATen one),
    'executorch_call_delegate', 'getitem'."""
    for op in (target, getattr(target, "_op", None)):  # an EdgeOpOverload holds its ATen op in _op
        if isinstance(op, torch._ops.OpOverload):
            return str(op)
    return getattr(target, "__name__", None) or str(target)


def dtype_name(dtype):
    """'float32' of torch.float32."""
    return str(dtype).replace("torch.", "")


def module_of(node):
    """(module path, class name) of the innermost module that called the node, or ("", "")."""
    stack = node.meta.get("nn_module_stack") or {}
    for key, (path, cls) in reversed(list(stack.items())):
        if str(key).startswith("_empty_nn_module_stack"):
            break
        if isinstance(cls, type):
            cls = f"{cls.__module__}.{cls.__qualname__}"
        return str(path), str(cls).rsplit(".", 1)[-1]
    return "", ""


class _Sizes:
    """Shapes as text and upper bounds, with the spec's dim names for torch's symbols."""

    def __init__(self, ep, names):
        self.names = {str(sym): name for sym, name in names.items()}
        self.bounds = {}
        for sym, bounds in ep.range_constraints.items():
            upper = bounds.upper
            # Unbounded is sympy's oo or torch's int_oo, and int_oo calls itself finite.
            self.bounds[str(sym)] = int(upper) if isinstance(upper, sympy.Integer) else None

    def text(self, size):
        if isinstance(size, int):
            return str(size)
        expr = str(size.node.expr if isinstance(size, torch.SymInt) else size)
        for sym in sorted(self.names, key=len, reverse=True):
            expr = expr.replace(sym, self.names[sym])
        return expr

    def upper(self, size):
        if isinstance(size, int):
            return size
        expr = size.node.expr if isinstance(size, torch.SymInt) else size
        bounds = {s: self.bounds.get(str(s)) for s in expr.free_symbols}
        if None in bounds.values():
            return None
        bound = expr.subs(bounds)
        return int(bound) if bound.is_number else None

    def tensor(self, value):
        """{"dtype", "shape" (text), "max" (upper bounds)} of a tensor value; None otherwise."""
        if not isinstance(value, torch.Tensor):
            return None
        return {"dtype": dtype_name(value.dtype), "shape": [self.text(s) for s in value.shape],
                "max": [self.upper(s) for s in value.shape]}


def _values(node, sizes):
    """The tensors a node produces, each as _Sizes.tensor gives it."""
    val = node.meta.get("val")
    vals = val if isinstance(val, (list, tuple)) else [val]
    return [t for t in (sizes.tensor(v) for v in vals) if t is not None]


def _numel(shape):
    count = 1
    for size in shape:
        count *= size or 0
    return count


def base_op(op):
    """'aten.convolution' of 'aten.convolution.out' (the overload says only where it writes)."""
    parts = op.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else op


# FLOPs: 2 per multiply-add for convolutions and matrix products, 1 per output element for
# arithmetic, 0 for operators that only move or view data.
_MOVES = {"aten.view_copy", "aten.permute_copy", "aten.slice_copy", "aten.select_copy", "aten.expand_copy",
          "aten.clone", "aten.cat", "aten.unsqueeze_copy", "aten.squeeze_copy", "aten.t_copy",
          "aten.transpose_copy", "aten.split_with_sizes_copy", "aten.embedding", "aten.full",
          "aten.index", "aten.index_put", "aten.copy", "aten.sym_size", "aten.zeros", "aten.arange",
          "aten.alias_copy", "aten.index_select", "aten.constant_pad_nd", "aten.repeat"}


def flops(op, node, out_numel, sizes):
    """An estimate at the largest shapes; None when a shape it needs is unknown."""
    base = base_op(op)
    if not base.startswith("aten.") or base in _MOVES:  # memory.view, executorch_prim, dim_order_ops
        return 0
    args = [a for a in node.args if isinstance(a, torch.fx.Node)]
    shapes = [[sizes.upper(s) for s in a.meta["val"].shape] if isinstance(a.meta.get("val"), torch.Tensor)
              else None for a in args]
    if base == "aten.convolution" and len(shapes) > 1 and shapes[1]:
        return 2 * out_numel * _numel(shapes[1][1:])  # weight [C_out, C_in / groups, *kernel]
    if base == "aten.linear" and len(shapes) > 1 and shapes[1]:
        return 2 * out_numel * shapes[1][-1]
    if base in ("aten.mm", "aten.bmm", "aten.matmul") and shapes and shapes[0]:
        return 2 * out_numel * shapes[0][-1]
    if base == "aten.addmm" and len(shapes) > 1 and shapes[1]:
        return 2 * out_numel * shapes[1][-1]
    return out_numel


def _kinds(ep):
    """{placeholder name: (kind, target)}: "user_input", "parameter", "buffer", "constant_tensor"."""
    return {spec.arg.name: (spec.kind.name.lower(), spec.target) for spec in ep.graph_signature.input_specs
            if hasattr(spec.arg, "name")}


def _weight_tensor(ep, target):
    found = ep.state_dict.get(target)
    return found if isinstance(found, torch.Tensor) else ep.constants.get(target)


class _Method:
    """Builds one method's record while walking its graph and its partitions' graphs."""

    def __init__(self, sizes):
        self.sizes = sizes
        self.nodes, self.partitions, self.weights = [], [], {}
        self.ids = {}  # fx node -> the id of the node that produces its value
        self.weight_of = {}  # fx placeholder -> weight name

    def _inputs(self, node):
        """The ids of the nodes whose values this one reads (not where it writes, not weights)."""
        read = []
        kwargs = {k: v for k, v in node.kwargs.items() if k not in _OUT_ARGS}
        torch.fx.node.map_arg((node.args, kwargs), read.append)
        found = []
        for leaf in read:
            produced = self.ids.get(leaf)
            for source in produced if isinstance(produced, list) else [produced]:
                if isinstance(source, str) and source not in found:
                    found.append(source)
        return found

    def _weights_used(self, node):
        used = []
        for leaf in node.all_input_nodes:
            if leaf in self.weight_of and self.weight_of[leaf] not in used:
                used.append(self.weight_of[leaf])
        return used

    def add(self, node, kind, op=None, partition=None):
        record = {"id": f"n{len(self.nodes)}", "kind": kind, "name": node.name, "op": op,
                  "inputs": self._inputs(node) if kind != "input" else [],
                  "values": _values(node, self.sizes), "partition": partition}
        path, cls = module_of(node)
        record.update(module=path, module_type=cls)
        if kind == "op":
            weights = self._weights_used(node)
            numel = sum(_numel(v["max"]) for v in record["values"])
            record.update(weights=weights, flops=flops(op, node, numel, self.sizes),
                          params=sum(self.weights[w]["numel"] for w in weights))
            handle = node.meta.get("debug_handle")
            record["debug_handle"] = int(handle) if isinstance(handle, (int, str)) and str(handle).isdigit() else None
        self.nodes.append(record)
        self.ids[node] = record["id"]
        return record

    def add_weight(self, node, ep, kind, target, partition):
        tensor = _weight_tensor(ep, target)
        if tensor is None:
            return
        name = str(target)
        if name not in self.weights:
            path, _ = module_of(node)
            dtype = dtype_name(tensor.dtype)
            self.weights[name] = {
                "name": name, "kind": kind, "dtype": dtype, "shape": list(tensor.shape),
                "numel": tensor.numel(), "bytes": tensor.numel() * tensor.element_size(),
                "module": name.rsplit(".", 1)[0] if "." in name else path, "partitions": [],
            }
        where = self.weights[name]["partitions"]
        if partition not in where:
            where.append(partition)
        self.weight_of[node] = name

    def walk(self, ep, partition=None, outer_args=None):
        """Adds ep's nodes; inside a partition, its user inputs are the delegate call's arguments
        (outer_args) and its outputs are returned for the getitems that read them."""
        from executorch.exir import memory

        kinds, user = _kinds(ep), 0
        for node in ep.graph.nodes:
            if node.op == "placeholder":
                kind, target = kinds.get(node.name, ("user_input", None))
                if kind != "user_input":
                    self.add_weight(node, ep, kind, target, partition)
                elif outer_args is not None:
                    self.ids[node] = self.ids.get(outer_args[user])
                    user += 1
                else:
                    self.add(node, "input")
            elif node.op == "call_function" and node.target is not memory.alloc:
                self._call(ep, node, partition)
            elif node.op == "output":
                outputs = list(torch.fx.node.map_aggregate(node.args[0], lambda n: n))
                if outer_args is not None:
                    return [self.ids.get(n) for n in outputs]
                keys = _output_keys(ep, len(outputs))
                for n, key in zip(outputs, keys):
                    if isinstance(n, torch.fx.Node):
                        self._output(n, key)
        return []

    def _output(self, node, key=None):
        produced = self.ids.get(node)
        self.nodes.append({"id": f"n{len(self.nodes)}", "kind": "output", "name": key or node.name, "op": None,
                           "inputs": [produced] if isinstance(produced, str) else [],
                           "values": _values(node, self.sizes), "partition": None,
                           "module": "", "module_type": ""})

    def _call(self, ep, node, partition):
        import operator

        name = op_name(node.target)
        if node.target is operator.getitem:
            source, index = node.args
            produced = self.ids.get(source)
            self.ids[node] = produced[index] if isinstance(produced, list) else produced
        elif name == "executorch_call_delegate":
            self._delegate(ep, node)
        else:
            self.add(node, "op", name, partition)

    def _delegate(self, ep, node):
        lowered = getattr(ep.graph_module, node.args[0].target)
        index = len(self.partitions)
        self.partitions.append({"index": index, "backend": lowered.backend_id,
                                "bytes": len(lowered.processed_bytes), "name": node.args[0].target})
        outputs = self.walk(lowered.original_module, index, list(node.args[1:]))
        self.ids[node] = outputs


def memory_plan(ep):
    """Every planned tensor of a method once: its buffer (mem_id), offset, bytes and lifetime
    (first and last step of the memory planning pass's numbering), named after the node that
    writes it."""
    from executorch.exir import memory
    from executorch.exir.memory_planning import get_node_tensor_specs

    tensors, seen = [], set()
    for node in ep.graph.nodes:
        if node.op == "output" or node.target in (memory.alloc, memory.view):
            continue
        for spec in get_node_tensor_specs(node) or []:
            if spec is None or spec.mem_id is None or spec.const or id(spec) in seen or spec.lifetime[0] is None:
                continue
            seen.add(id(spec))
            tensors.append({"name": node.name, "buffer": spec.mem_id, "offset": spec.mem_offset,
                            "bytes": spec.allocated_memory, "lifetime": list(spec.lifetime)})
    return sorted(tensors, key=lambda t: (t["buffer"], t["lifetime"][0], t["offset"], t["name"]))


def method_record(ep, names):
    """One method: nodes, partitions (index, backend, payload bytes), weights and memory plan.
    names maps torch's size symbols to the spec's dim names (core/symbols.py)."""
    method = _Method(_Sizes(ep, names))
    method.walk(ep)
    return {"nodes": method.nodes, "partitions": method.partitions,
            "weights": sorted(method.weights.values(), key=lambda w: w["name"]),
            "memory": memory_plan(ep)}


def _output_keys(ep, count):
    """Each of the graph's count outputs' name in the model's outputs ("logits"; None for a
    mutated buffer, and for every output of a program whose outputs have no names): the user
    outputs come last (core/output_tree.py)."""
    from exporter.core import output_tree

    names = output_tree.program_names(ep) or []
    return [None] * (count - len(names)) + list(names)


def record(et_program, programs, specs, label):
    """The graph record of an ExecuTorch program (ExecutorchProgramManager) lowered from the
    ExportedPrograms `programs` ({method name: program}), exported with `specs` ({method name:
    shape spec or None})."""
    methods = {}
    for name in sorted(et_program.methods):
        names = symbols.symbol_names(programs[name], specs.get(name)) if name in programs else {}
        methods[name] = method_record(et_program.exported_program(name), names)
    return {"format": FORMAT, "label": label, "methods": methods}
