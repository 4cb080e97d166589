"""What a .pte's methods hold: inputs, outputs, operators, delegates and planned memory.

One walk over a Program, for two readers of the same schema (program.fbs):
- ExecuTorch's own dataclasses (executorch.exir.schema), which the lowering has in memory
  (lower.py) and which ExecuTorch's deserialize_pte_binary returns (the tests' reference);
- pte_schema's Table view of a .pte's bytes, which pte_inspect.py and snapshot.py read.
  ExecuTorch's reader is not used there because importing executorch.exir._serialize imports
  all of exir and torch: 4.2 s, against 0.15 s for pte_inspect to summarise the 47 MB ResNet-18
  .pte (measured 2026-11-22, ExecuTorch 1.4.1).
Both name fields as the schema does; they differ only in how unions and enums appear, which
kind() and enum_name() paper over.
"""

import collections

from exporter.core import dtypes, operators
from exporter.formats import pte_schema

_VALUE_TYPES = {"Int": "int", "Bool": "bool", "Double": "float", "String": "str",
                "IntList": "int list", "DoubleList": "float list", "BoolList": "bool list",
                "TensorList": "tensor list", "OptionalTensorList": "optional tensor list",
                "Null": "none"}


def kind(value):
    """The schema type of a union member: "Tensor", "KernelCall", ..."""
    return getattr(value, "table_name", None) or type(value).__name__


def enum_name(value):
    """An enum value's name: pte_schema gives strings, ExecuTorch's dataclasses Enum members."""
    return value if isinstance(value, str) else value.name


def op_names(plan):
    """Each operator of an execution plan as ExecuTorch names it: "aten::add.out"."""
    return [operators.program_name(op.name, op.overload) for op in plan.operators]


def value_record(value):
    """A method input or output: a tensor's dtype, max sizes and bytes, or a scalar's kind."""
    if value is None:
        return {"type": "none"}
    if kind(value) != "Tensor":
        return {"type": _VALUE_TYPES.get(kind(value), kind(value))}
    dtype = dtypes.torch_name(value.scalar_type)
    sizes = list(value.sizes)
    numel = 1
    for size in sizes:
        numel *= size
    return {
        "type": "tensor",
        "dtype": dtype,
        "sizes": sizes,  # upper bounds when the shape is dynamic
        "dynamism": enum_name(value.shape_dynamism).lower(),
        "nbytes": numel * dtypes.element_bytes(dtype),
    }


def delegate_bytes(program, processed):
    """The size of a delegate's payload, inline in the flatbuffer or in a segment."""
    if enum_name(processed.location) == "INLINE":
        return len(program.backend_delegate_data[processed.index].data)
    return program.segments[processed.index].size


def method_record(program, plan):
    """inputs, outputs, instruction count, operators (calls outside delegates), delegates
    ({id: {count, bytes}}) and planned memory of one execution plan."""
    names = op_names(plan)
    op_counts, instructions = collections.Counter(), 0
    for chain in plan.chains:
        for instruction in chain.instructions:
            instructions += 1
            args = instruction.instr_args
            if args is not None and kind(args) == "KernelCall":
                if not 0 <= args.op_index < len(names):  # from a file: pte_schema's reader (pte_inspect)
                    raise pte_schema.Corrupt(f"method {plan.name} calls operator {args.op_index} of {len(names)}")
                op_counts[names[args.op_index]] += 1
    delegates = collections.defaultdict(lambda: {"count": 0, "bytes": 0})
    for delegate in plan.delegates:
        delegates[delegate.id]["count"] += 1
        delegates[delegate.id]["bytes"] += delegate_bytes(program, delegate.processed)
    # Buffer 0 is reserved by ExecuTorch; the others are the planned memory arenas.
    planned = list(plan.non_const_buffer_sizes)[1:]
    values = plan.values
    return {
        "inputs": [value_record(values[i].val) for i in plan.inputs],
        "outputs": [value_record(values[i].val) for i in plan.outputs],
        "instructions": instructions,
        "operators": dict(sorted(op_counts.items())),
        "delegates": dict(sorted(delegates.items())),
        "planned_memory": {"buffers": planned, "bytes": sum(planned)},
    }


_SCALAR_FIELDS = {"Int": "int_val", "Bool": "bool_val", "Double": "double_val", "String": "string_val"}


def constant_value(plan):
    """The value a constant method returns (ExecuTorch's constant_methods: no inputs, no
    instructions, scalar outputs), or None for a method that computes. A list of ints (an LLM's
    get_eos_ids) is one output per item, so it reads back as a list; a list of one, as its item."""
    if len(plan.inputs) or any(len(chain.instructions) for chain in plan.chains) or not len(plan.outputs):
        return None
    values = [plan.values[i].val for i in plan.outputs]
    fields = [_SCALAR_FIELDS.get(kind(v)) if v is not None else None for v in values]
    if None in fields or (len(values) > 1 and set(fields) != {"int_val"}):
        return None
    found = [getattr(v, str(f)) for v, f in zip(values, fields)]
    return found[0] if len(found) == 1 else found


def constants(program):
    """{name: value} of the program's constant methods (metadata, input_schema)."""
    found = {plan.name: constant_value(plan) for plan in program.execution_plan}
    return {name: value for name, value in found.items() if value is not None}


def methods(program):
    """{method name: method_record} for every execution plan, constant methods included."""
    return {plan.name: method_record(program, plan) for plan in program.execution_plan}
