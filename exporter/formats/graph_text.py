"""The canonical text of an exported program (and of its .pte) that graph_snapshot_test diffs,
rendered at build time by its GraphSnapshot action (actions/snapshot_text.py).

It holds the graph signature, input shapes and range constraints, every node with its op,
arguments, dtype and shape, and for a .pte the execution plan. It never holds weights, stack
traces, paths or addresses. Symbols such as torch's `s77` are renamed after the shape_spec's
dims (`batch`); the others (AUTO/DYNAMIC axes, derived sizes torch could not tie to a dim)
become sym0, sym1, ... in order of first appearance. Its header: formats/graph_header.py.
"""

import sympy
import torch

from exporter.core import operators, output_tree, symbols
from exporter.formats import graph_header, program_summary, pte_inspect


class _Printer:
    """Formats values with stable symbol names."""

    def __init__(self, names):
        self.names = {sym: sympy.Symbol(name) for sym, name in names.items()}
        self.taken = set(names.values())
        self.next_index = 0

    def expr(self, expr):
        for sym in sorted(expr.free_symbols, key=str):
            if sym not in self.names:
                while f"sym{self.next_index}" in self.taken:
                    self.next_index += 1
                self.names[sym] = sympy.Symbol(f"sym{self.next_index}")
                self.taken.add(f"sym{self.next_index}")
        return str(expr.xreplace(self.names))

    def size(self, size):
        return self.expr(size.node.expr) if isinstance(size, torch.SymInt) else str(size)

    def value(self, val):
        """A node's meta['val']: dtype[shape] for tensors, recursively for tuples."""
        if isinstance(val, torch.Tensor):
            return f"{str(val.dtype).replace('torch.', '')}[{', '.join(self.size(s) for s in val.shape)}]"
        if isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return "sym " + self.expr(val.node.expr)
        if isinstance(val, (list, tuple)):
            return "(" + ", ".join(self.value(v) for v in val) + ")"
        if val is None or isinstance(val, (bool, int, float, str)):
            return repr(val)
        return type(val).__name__

    def arg(self, a):
        if isinstance(a, torch.fx.Node):
            return "%" + a.name
        if isinstance(a, (list, tuple)):
            inner = ", ".join(self.arg(x) for x in a)
            return f"[{inner}]" if isinstance(a, list) else f"({inner})"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {self.arg(v)}" for k, v in a.items()) + "}"
        if isinstance(a, (torch.dtype, torch.device, torch.layout, torch.memory_format)):
            return str(a)
        if isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return self.expr(a.node.expr)
        if a is None or isinstance(a, (bool, int, float, str)):
            return repr(a)
        return type(a).__name__  # never a repr that could hold an address


def _graph_lines(gm, printer):
    lines = []
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            lines.append(f"return {printer.arg(node.args[0])}")
            continue
        args = [printer.arg(a) for a in node.args]
        args += [f"{k}={printer.arg(v)}" for k, v in node.kwargs.items()]
        op = operators.name(node.target) if node.op == "call_function" else f"{node.op} {operators.name(node.target)}"
        lines.append(f"%{node.name} = {op}({', '.join(args)}) -> {printer.value(node.meta.get('val'))}")
    return lines


def pt2_lines(ep, spec):
    """The exported program's sections: inputs, outputs, range constraints, graph(s)."""
    printer = _Printer(symbols.symbol_names(ep, spec))
    vals = {n.name: n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder"}
    lines = ["", "== inputs"]
    for s in ep.graph_signature.input_specs:
        name = getattr(s.arg, "name", str(s.arg))
        target = f" {s.target}" if s.target else ""
        persistent = " (not persistent)" if s.persistent is False else ""
        lines.append(f"{s.kind.name.lower()} %{name}{target}: {printer.value(vals.get(name))}{persistent}")
    output_node = next(n for n in ep.graph.nodes if n.op == "output")
    outputs = {a.name: a.meta.get("val") for a in output_node.args[0] if isinstance(a, torch.fx.Node)}
    lines += ["", "== outputs"]
    keys = iter(output_tree.program_names(ep) or ())  # the user outputs' names, when they have any
    for s in ep.graph_signature.output_specs:
        name = getattr(s.arg, "name", str(s.arg))
        target = f" {s.target}" if s.target else ""
        if s.kind.name == "USER_OUTPUT":
            target = f" {next(keys, '')}".rstrip()
        lines.append(f"{s.kind.name.lower()} %{name}{target}: {printer.value(outputs.get(name))}")
    lines += ["", "== range constraints"]
    ranges = []
    for expr, vr in ep.range_constraints.items():
        upper = int(vr.upper) if vr.upper.is_finite else "inf"
        ranges.append(f"{printer.expr(expr)}: [{int(vr.lower)}, {upper}]")
    lines += sorted(ranges) or ["(none)"]
    for name, gm in ep.graph_module.named_modules():
        if isinstance(gm, torch.fx.GraphModule):
            lines += ["", f"== graph {name}" if name else "== graph"]
            lines += _graph_lines(gm, printer)
    return lines


def _instruction(plan, instruction, op_names):
    args = instruction.instr_args
    kind = program_summary.kind(args) if args is not None else "None"
    if kind == "KernelCall":
        return f"kernel {op_names[args.op_index]}"
    if kind == "DelegateCall":
        return f"delegate {plan.delegates[args.delegate_index].id}"
    return {"MoveCall": "move", "JumpFalseCall": "jump_false", "FreeCall": "free"}.get(kind, kind)


def pte_lines(buf):
    """The .pte's execution plan: per method its inputs, outputs and instruction sequence."""
    program = pte_inspect.read_program(buf)
    lines = []
    for plan in program.execution_plan:
        if program_summary.constant_value(plan) is not None:
            continue
        method = program_summary.method_record(program, plan)
        op_names = program_summary.op_names(plan)
        lines += ["", f"== program method {plan.name}"]
        for kind in ("inputs", "outputs"):
            lines += [f"{kind[:-1]} {i}: {pte_inspect.format_value(v)}" for i, v in enumerate(method[kind])]
        lines.append(f"planned memory: {method['planned_memory']['bytes']} bytes")
        lines += [_instruction(plan, ins, op_names) for chain in plan.chains for ins in chain.instructions]
    for name, value in program_summary.constants(program).items():
        lines += ["", f"== program constant {name}: {value!r}"]
    return lines


def render(label, ep, spec, pte_bytes=None):
    """The full golden text: header, the exported program, and the .pte's plan if given."""
    lines = graph_header.header_lines(label)
    lines += pt2_lines(ep, spec)
    if pte_bytes is not None:
        lines += pte_lines(pte_bytes)
    return "\n".join(lines) + "\n"
