"""bf16 operations (a 910B's, in INF/NAN mode) that torch's own CPU bf16 kernels compute exactly
as the general path does, so the fast path runs them on the bf16 tensors directly.

The general path widens each bf16 input to fp32, runs torch's fp32 kernel and rounds the result
once to nearest even. For the operations below torch's bf16 kernel does the same arithmetic: each
element is widened, one IEEE-exact fp32 operation computes it (a product, quotient, sum,
difference or negation), or it is selected or copied (``relu`` and its backward, ``masked_fill``,
``where``, ``cat``, ``clone``, the backwards of ``select`` and ``slice``; ``embedding``,
``index_select`` and ``gather`` pick elements by index), and the result is rounded once to
nearest even, in its vector code and its scalar code alike. Only the NaN pattern differs (0xFFFF
from x86 vector code, 0x7FC0 from scalar code), so every output is made one pattern afterwards,
in one runtime pass, as the general path's store makes it. Saturation mode keeps the round trip:
its stores clamp and report.

Left out because torch's bf16 kernels round them differently (compared with the general path
over every bf16 value on torch 1.13 and 2.13; ``test_emulator_bf16_torch_kernels.py`` checks
that they keep the round trip and its bits):
- a Python number added or subtracted (torch rounds it to bf16 first);
- a Python number multiplied or divided by on torch 1.x (likewise; torch 2.x keeps it fp32);
- ``alpha`` other than 1 (torch fuses ``a + alpha * b``), and transcendental functions
  (``exp``, ``silu``, ``rsqrt``: torch's vector and scalar code round differently, and which
  elements each takes depends on the vector width of the dtype);
- any tensor operand not bf16 (a 0-dim fp32 tensor is rounded to bf16 first).
In-place forms keep the round trip too: the tensor they write may overlap one they read.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Optional, Sequence

import torch

from . import fp32_copies, kernel_operands, saturation

aten = torch.ops.aten
NOT_HANDLED = object()
_BF16 = torch.bfloat16
_BOOL = torch.bool
_Tensor = torch.Tensor
_is_cpu = torch._C._TensorBase.is_cpu.__get__
_is_one = kernel_operands.is_one

# torch 2.x's bf16 kernels multiply and divide by a Python number in fp32 (its original value
# rounded once to fp32, as the fp32 kernel receives it); torch 1.x rounds the number to bf16.
_FP32_NUMBERS = int(torch.__version__.split(".")[0]) >= 2
_FLOAT_MAX = float(torch.finfo(torch.float32).max)
_FLOAT_EXACT_INT = 1 << 24
_KEEP_FORMATS = (None, torch.preserve_format, torch.contiguous_format)

Args = Sequence[Any]
Kwargs = Dict[str, Any]


def bf16_operand(x: Any) -> bool:
    """A strided bf16 tensor in host memory (where the emulated NPU keeps its data)."""
    return isinstance(x, _Tensor) and x.dtype is _BF16 and x.layout == torch.strided and _is_cpu(x)


def _mask(x: Any) -> bool:
    return isinstance(x, _Tensor) and x.dtype is _BOOL and x.layout == torch.strided and _is_cpu(x)


def _fp32_number(value: Any) -> bool:
    """A Python number torch 2.x's bf16 kernel and the fp32 kernel both use as the same float."""
    if type(value) is float:
        return math.isfinite(value) and abs(value) <= _FLOAT_MAX
    return type(value) is int and abs(value) <= _FLOAT_EXACT_INT


def _unary(args: Args, kwargs: Kwargs) -> bool:
    return len(args) == 1 and not kwargs and bf16_operand(args[0])


def _sum_or_difference(args: Args, kwargs: Kwargs) -> bool:
    if len(args) != 2 or any(k != "alpha" for k in kwargs):
        return False
    return _is_one(kwargs.get("alpha", 1)) and bf16_operand(args[0]) and bf16_operand(args[1])


def _product_or_quotient(args: Args, kwargs: Kwargs) -> bool:
    if len(args) != 2 or kwargs or not bf16_operand(args[0]):
        return False
    other = args[1]
    return bf16_operand(other) or (_FP32_NUMBERS and _fp32_number(other))


def _masked_fill(args: Args, kwargs: Kwargs) -> bool:
    if len(args) != 3 or kwargs:
        return False
    x, mask, value = args
    # A number fp32 holds (or +-inf): a larger one is refused by each kernel in its own words.
    number = _fp32_number(value) or (type(value) is float and math.isinf(value))
    return number and bf16_operand(x) and _mask(mask)


def _where(args: Args, kwargs: Kwargs) -> bool:
    return (
        len(args) == 3
        and not kwargs
        and _mask(args[0])
        and bf16_operand(args[1])
        and bf16_operand(args[2])
    )


def _cat(args: Args, kwargs: Kwargs) -> bool:
    if kwargs or not 1 <= len(args) <= 2 or not isinstance(args[0], (list, tuple)) or not args[0]:
        return False
    return all(bf16_operand(t) for t in args[0])


def _threshold_backward(args: Args, kwargs: Kwargs) -> bool:
    """``self <= 0 ? 0 : grad`` (relu's backward): at threshold 0 the comparison is exact in any
    precision."""
    if len(args) != 3 or kwargs:
        return False
    grad, x, threshold = args
    return (
        type(threshold) in (int, float)
        and threshold == 0
        and bf16_operand(grad)
        and bf16_operand(x)
    )


def _gradient_into_zeros(args: Args, kwargs: Kwargs) -> bool:
    """``select_backward``/``slice_backward``: zeros with the gradient copied into them."""
    return not kwargs and len(args) >= 2 and bf16_operand(args[0])


def _indices(x: Any) -> bool:
    return (
        isinstance(x, _Tensor)
        and x.dtype in (torch.int64, torch.int32)
        and x.layout == torch.strided
        and _is_cpu(x)
    )


def _embedding(args: Args, kwargs: Kwargs) -> bool:
    """Rows of a bf16 table picked by host indices (``padding_idx`` and the rest only shape
    the backward)."""
    return not kwargs and len(args) >= 2 and bf16_operand(args[0]) and _indices(args[1])


def _index_select(args: Args, kwargs: Kwargs) -> bool:
    return not kwargs and len(args) == 3 and bf16_operand(args[0]) and _indices(args[2])


def _gather(args: Args, kwargs: Kwargs) -> bool:
    if len(args) != 3 or any(k != "sparse_grad" for k in kwargs):
        return False
    return bf16_operand(args[0]) and _indices(args[2])


def _clone(args: Args, kwargs: Kwargs) -> bool:
    if len(args) != 1 or any(k != "memory_format" for k in kwargs):
        return False
    return kwargs.get("memory_format") in _KEEP_FORMATS and bf16_operand(args[0])


_RULES: Dict[Any, Callable[[Args, Kwargs], bool]] = {
    # one exact fp32 operation
    aten.neg.default: _unary,
    aten.abs.default: _unary,
    aten.add.Tensor: _sum_or_difference,
    aten.sub.Tensor: _sum_or_difference,
    aten.mul.Tensor: _product_or_quotient,
    aten.div.Tensor: _product_or_quotient,
    # selections and copies
    aten.relu.default: _unary,
    aten.threshold_backward.default: _threshold_backward,
    aten.masked_fill.Scalar: _masked_fill,
    aten.where.self: _where,
    aten.cat.default: _cat,
    aten.clone.default: _clone,
    aten.select_backward.default: _gradient_into_zeros,
    aten.slice_backward.default: _gradient_into_zeros,
    # picks by index
    aten.embedding.default: _embedding,
    aten.index_select.default: _index_select,
    aten.gather.default: _gather,
}


def one_nan_pattern(out: torch.Tensor, rt: Optional[Any]) -> None:
    """Store every NaN of the new bf16 tensor ``out`` as 0x7FC0, in place: one pass of the
    runtime's bf16 copy in INF/NAN mode, which leaves every other value as it is, over a tensor
    that is one flat range of memory (as these ops' new outputs are); torch operations
    otherwise, and without the runtime."""
    flat = out.is_contiguous() or fp32_copies.non_overlapping_and_dense(out.size(), out.stride())
    if flat and rt is not None and hasattr(rt, "copy_bf16"):
        if out.numel():
            rt.copy_bf16(out.data_ptr(), out.data_ptr(), out.numel(), False)
        return
    saturation.one_nan(out)


def run(func: Any, args: Args, kwargs: Kwargs, rt: Optional[Any]) -> Any:
    """The op's result from torch's bf16 kernel, or NOT_HANDLED. Only for INF/NAN mode."""
    rule = _RULES.get(func)
    if rule is None or rt is None or not hasattr(rt, "copy_bf16") or not rule(args, kwargs):
        return NOT_HANDLED
    out = func(*args, **kwargs)
    one_nan_pattern(out, rt)
    return out
