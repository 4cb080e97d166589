"""Float work that decides a program's bytes, computed in float64 and rounded to float32 once.

Calibration statistics (and a bundle's expected outputs) come from running the model. In
float32 their last bits follow the CPU's kernels: MKL picks its GEMM code path by CPU vendor and
model, so an Intel and an AMD machine sum a convolution in different orders, even with ATen's
and MKL's instruction sets pinned (determinism.REPRODUCIBLE_MATH_ENV). A histogram observer turns
such a last-bit change into another scale. In float64 the same sums differ by about 1e-16
relative between kernels, and a value rounded to float32 once lands on the same float32 unless
it sits within that distance of a rounding boundary (a chance of about 1e-9 per value), so the
statistics come out bit for bit the same.

float64() runs a block with every float32 operator of a graph computed in float64: each ATen
operator (`torch.ops.aten.*`, what an exported program's graph calls) that reads float32 tensors
reads them widened, so the whole chain stays in float64 until something stores into a float32
tensor (an observer's min/max, a buffer), which rounds once. It acts where the graph calls the
operator, above ATen's composite operators, whose dtype checks would otherwise see the mix.
Views pass through unchanged, so a view still aliases its base; operators that write a float32
tensor take their other operands rounded to float32, as storing does. Plain torch functions
(an observer's own code) run as written, on what the graph hands them.
"""

import contextlib

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_map


def _widen(value):
    if isinstance(value, torch.Tensor) and value.dtype == torch.float32:
        return value.to(torch.float64)
    return value


def _narrow(value):
    if isinstance(value, torch.Tensor) and value.dtype == torch.float64:
        return value.to(torch.float32)
    return value


def _writes_float32(func, args, kwargs):
    """True when func writes into a float32 tensor argument (in place or out=)."""
    for index, argument in enumerate(func._schema.arguments):
        if argument.alias_info is None or not argument.alias_info.is_write:
            continue
        value = args[index] if index < len(args) else kwargs.get(argument.name)
        if isinstance(value, torch.Tensor) and value.dtype == torch.float32:
            return True
    return False


class _Float64Mode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not isinstance(func, torch._ops.OpOverload) or func.is_view:
            return func(*args, **kwargs)
        if func._schema.is_mutable:
            if _writes_float32(func, args, kwargs):
                written = {i for i, a in enumerate(func._schema.arguments)
                           if a.alias_info is not None and a.alias_info.is_write}
                args = tuple(a if i in written else tree_map(_narrow, a) for i, a in enumerate(args))
                kwargs = {k: v if any(func._schema.arguments[i].name == k for i in written)
                          else tree_map(_narrow, v) for k, v in kwargs.items()}
            return func(*args, **kwargs)
        return func(*tree_map(_widen, args), **tree_map(_widen, kwargs))


@contextlib.contextmanager
def float64():
    """Runs the block's float32 arithmetic in float64 (see the module docstring)."""
    with _Float64Mode():
        yield



def widened(module):
    """A copy of module whose float32 parameters and buffers are float64. Calling it under
    float64() with widened inputs computes in float64: an exported program's module() because
    its graph's operators widen, an eager module because its state is float64."""
    import copy

    wide = copy.deepcopy(module)
    wide._apply(_widen)
    return wide


def call(wide_module, args, kwargs):
    """wide_module(*args, **kwargs) in float64; outputs stay float64 (the caller rounds them once,
    to the dtypes it needs)."""
    with torch.no_grad(), float64():
        return wide_module(*tree_map(_widen, args), **tree_map(_widen, kwargs))
