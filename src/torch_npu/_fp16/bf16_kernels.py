"""bf16 operations (a 910B's) the fast path computes without the fp32 round trip.

Each gives exactly what the general path gives: the same bf16 bits, the same float status, a new
contiguous tensor (or the written input, for in-place ops), in either overflow mode (the
runtime's bf16 stores take the mode: ``saturate``). They apply only where that is plain to see:
non-empty contiguous host tensors of one shape and the arguments below; anything else returns
``NOT_HANDLED`` and takes the round trip (whose widening and rounding the runtime does too).
- ``add``/``add_`` of two bf16 tensors with ``alpha`` 1: the fp32 sum, stored once (torch's
  fp32 kernel computes ``a + alpha * b`` with one rounding; ``alpha * b`` is exact at 1).
  Autograd accumulates the gradient of a tensor used at every step of a recurrent model so.
- conversions: ``_to_copy`` of bf16 to fp32 is the general path's widening, of fp32 to bf16
  its rounding (autocast's casts and their gradients; the values of a view gathered first, into
  the contiguous layout the NPU's outputs have); ``copy_`` of fp32 values into a bf16 tensor is
  its rounding too.
- copies of bf16 values (``clone``, ``_to_copy`` to bf16, ``copy_`` between bf16 tensors): the
  values widened and stored again, which leaves every value as it was but NaN (one pattern in
  INF/NAN mode, +0 in saturation mode, reported) and inf (the largest bf16 in saturation mode,
  reported).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence

import torch

from . import fp32_copies, kernel_operands

aten = torch.ops.aten
NOT_HANDLED = object()
_BF16 = torch.bfloat16
_FLOAT = torch.float32
_empty = torch._C._VariableFunctions.empty
_plain = kernel_operands.plain
_is_one = kernel_operands.is_one
_KEEP_FORMATS = (None, torch.preserve_format, torch.contiguous_format)

Args = Sequence[Any]
Kwargs = Dict[str, Any]
Kernel = Callable[[Any, Args, Kwargs, bool], Any]


def _add_operands(args: Args, kwargs: Kwargs) -> Optional[Sequence[torch.Tensor]]:
    if len(args) != 2 or any(k != "alpha" for k in kwargs) or not _is_one(kwargs.get("alpha", 1)):
        return None
    a, b = args
    if not _plain(a, _BF16) or not _plain(b, _BF16) or a.shape != b.shape:
        return None
    return a, b


def _add(rt: Any, args: Args, kwargs: Kwargs, saturate: bool) -> Any:
    operands = _add_operands(args, kwargs)
    if operands is None:
        return NOT_HANDLED
    a, b = operands
    out = _empty(a.shape, dtype=_BF16)
    rt.add_bf16(a.data_ptr(), b.data_ptr(), out.data_ptr(), a.numel(), saturate)
    return out


def _add_(rt: Any, args: Args, kwargs: Kwargs, saturate: bool) -> Any:
    operands = _add_operands(args, kwargs)
    if operands is None or not kernel_operands.same_or_apart(*operands):
        return NOT_HANDLED
    a, b = operands
    rt.add_bf16(a.data_ptr(), b.data_ptr(), a.data_ptr(), a.numel(), saturate)
    return a


def _stored_copy(rt: Any, x: torch.Tensor, saturate: bool) -> torch.Tensor:
    out = _empty(x.shape, dtype=_BF16)
    rt.copy_bf16(x.data_ptr(), out.data_ptr(), x.numel(), saturate)
    return out


def _rounded(rt: Any, x: torch.Tensor, saturate: bool) -> torch.Tensor:
    out = _empty(x.shape, dtype=_BF16)
    rt.float_to_bf16(x.data_ptr(), out.data_ptr(), x.numel(), saturate)
    return out


def _clone(rt: Any, args: Args, kwargs: Kwargs, saturate: bool) -> Any:
    (x,) = args
    if (
        any(k != "memory_format" for k in kwargs)
        or kwargs.get("memory_format") not in _KEEP_FORMATS
    ):
        return NOT_HANDLED
    if not _plain(x, _BF16):
        return NOT_HANDLED
    return _stored_copy(rt, x, saturate)


def _to_copy(rt: Any, args: Args, kwargs: Kwargs, saturate: bool) -> Any:
    """A dtype change (``kernel_operands.dtype_change``)."""
    change = kernel_operands.dtype_change(args, kwargs)
    if change is None:
        return NOT_HANDLED
    x, dtype = change
    if x.dtype == _BF16 and dtype == _FLOAT and kernel_operands.strided(x, _BF16):
        return fp32_copies.to_fp32(x, rt)
    if x.dtype == _BF16 and dtype == _BF16 and _plain(x, _BF16):
        return _stored_copy(rt, x, saturate)
    if x.dtype == _FLOAT and dtype == _BF16 and kernel_operands.strided(x, _FLOAT):
        if not x.is_contiguous():  # autocast's cast of a view (a time step of a sequence)
            x = aten.clone.default(x, memory_format=torch.contiguous_format)
        return _rounded(rt, x, saturate)
    return NOT_HANDLED


def _copy_(rt: Any, args: Args, kwargs: Kwargs, saturate: bool) -> Any:
    if kwargs or len(args) != 2:
        return NOT_HANDLED
    dst, src = args
    if not _plain(dst, _BF16) or not isinstance(src, torch.Tensor) or src.shape != dst.shape:
        return NOT_HANDLED
    if _plain(src, _FLOAT):
        rt.float_to_bf16(src.data_ptr(), dst.data_ptr(), dst.numel(), saturate)
        return dst
    if _plain(src, _BF16) and kernel_operands.same_or_apart(dst, src):
        rt.copy_bf16(src.data_ptr(), dst.data_ptr(), dst.numel(), saturate)
        return dst
    return NOT_HANDLED


_KERNELS: Dict[Any, Kernel] = {
    aten.add.Tensor: _add,
    aten.add_.Tensor: _add_,
    aten.clone.default: _clone,
    aten._to_copy.default: _to_copy,
    aten.copy_.default: _copy_,
}


def run(func: Any, args: Args, kwargs: Kwargs, rt: Optional[Any], saturate: bool) -> Any:
    """The op's result computed without the round trip, or NOT_HANDLED. ``saturate``: the chip
    stores in saturation mode (else INF/NAN mode)."""
    kernel = _KERNELS.get(func)
    if kernel is None or rt is None or not hasattr(rt, "add_bf16"):
        return NOT_HANDLED
    return kernel(rt, args, kwargs, saturate)
