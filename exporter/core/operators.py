"""Operator names, in the three spellings the exporter meets:

  name(target)           a graph node's target, as torch prints it: "aten.add.Tensor",
                         "torch.ops.higher_order.cond", "_operator.getitem" (manifests'
                         histograms, snapshots, messages)
  kernel_name(op, ...)   the key of ExecuTorch's kernel registry: "aten::add.out" ("default" is no
                         overload; a bare name is ATen's), as kernel lists and selective build name it
  program_name(op, ...)  exactly as a .pte's operator table stores it: "aten::add.out",
                         "executorch_prim::et_view.default" (program summaries and manifests)
"""


def name(target):
    """How a graph node's target is named (torch's OpOverload, also inside ExecuTorch's
    EdgeOpOverload; a higher-order operator; any other callable by module and qualified name)."""
    if isinstance(target, str):  # call_module, get_attr
        return target
    import torch

    if isinstance(target, torch._ops.HigherOrderOperator):  # cond, map: by name, not address
        return f"torch.ops.higher_order.{target.name()}"
    wrapped = getattr(target, "_op", None)  # ExecuTorch's EdgeOpOverload wraps torch's op
    if not isinstance(target, torch._ops.OpOverload) and isinstance(wrapped, torch._ops.OpOverload):
        target = wrapped
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    return f"{getattr(target, '__module__', '')}.{getattr(target, '__qualname__', str(target))}"


def kernel_name(op, overload=""):
    """'aten::add.out' from ('aten::add', 'out') or 'aten::add.out'; 'default' is no overload."""
    if overload and overload != "default":
        op = f"{op}.{overload}"
    if op.endswith(".default"):
        op = op[: -len(".default")]
    return op if "::" in op else "aten::" + op


def program_name(op, overload):
    """An entry of a .pte's operator table, as the program spells it."""
    return f"{op}.{overload}" if overload else op


def dotted(kernel):
    """'aten.add.out' from the registry's 'aten::add.out': the spelling of torch.ops paths."""
    return kernel.replace("::", ".")
