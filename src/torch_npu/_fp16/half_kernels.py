"""fp16 operations the fast path computes without the fp32 round trip.

Each gives exactly what the general path gives: the same fp16 bits, the same float status, a
new tensor of the same layout (contiguous but for products, sums and negations of
non-contiguous operands) or the written input, for in-place ops. They apply only where that is
plain to see: non-empty tensors, contiguous ones of one shape where the runtime reads them flat
(a broadcast operand through its strides, ``broadcast_layout``; any layout where torch's own
fp16 kernel gathers the values), and the arguments below; anything else returns
``NOT_HANDLED`` and takes the round trip. The runtime's one-pass kernels
(``torch_npu._apexnpu``: ``*_half``, ``float_to_half``, ``half_to_float``) do the work; they raise
the float status of device 0, as the general path's ``float_to_half`` does.
- ``relu``/``relu_`` and ``threshold_backward(grad, self, 0)``: torch's fp32 ``max(x, 0)`` and
  ``self <= 0 ? 0 : grad`` on exact values, stored saturating.
- ``add``/``add_`` of two fp16 tensors with ``alpha`` 1: the fp32 sum, stored saturating (torch's
  fp32 kernel computes ``a + alpha * b`` with one rounding; ``alpha * b`` is exact at 1).
- ``add`` (``alpha`` 1) and ``mul`` of two fp16 tensors, one broadcast along the other (RMSNorm's
  weight, rotary's cos and sin, a per-row factor) or both of one shape, in the layouts
  ``broadcast_layout`` takes: the fp32 sum or product of the exact values, stored saturating,
  in the layout the round trip gives (a dense non-contiguous operand's strides).
- ``mul``/``mul_``/``div``/``div_`` of an fp16 tensor by a Python number: torch's fp32 kernel
  rounds the number to fp32 and multiplies or truly divides with one rounding, as the runtime
  does; numbers whose rounding could differ (floats beyond the fp32 range, inf, NaN, integers
  beyond 2**24) take the round trip.
- copies of fp16 values (``clone``, also ``.contiguous()`` of a view, ``_to_copy`` to fp16,
  ``copy_`` and ``_foreach_copy_`` between fp16 tensors, and ``cat`` of any layouts, whose fp16
  result torch makes natively): the values themselves, stored saturating (NaN -> 0 and
  inf -> +-65504, reported); ``zero_`` natively (zeros are zeros in any precision); ``neg``
  likewise, torch's fp16 kernel flipping the sign exactly.
- conversions: ``_to_copy`` to fp32 is the general path's own widening; ``_to_copy`` to fp16 of
  an fp32 tensor and ``copy_``/``_foreach_copy_`` of fp32 values into fp16 tensors are its
  narrowing.
- ``masked_fill`` with a fill value within ±65504: the value rounded as the round trip rounds
  it where the mask is set, the input stored saturating elsewhere; in one runtime pass when the
  mask repeats along the input, else torch's fp16 kernel, its result stored saturating in place.
- ``max_pool2d_with_indices`` of NCHW fp16: torch's contiguous fp32 kernel selects an element
  per window by comparisons, which the runtime repeats on the fp16 values (``half_max_pool.h``).
"""

from __future__ import annotations

import math
import struct
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from . import broadcast_layout, fp32_copies, kernel_operands, saturation

aten = torch.ops.aten
NOT_HANDLED = object()
_HALF = torch.float16
_FLOAT = torch.float32
_empty = torch._C._VariableFunctions.empty
_empty_strided = torch._C._VariableFunctions.empty_strided
_is_cpu = torch._C._TensorBase.is_cpu.__get__
_KEEP_FORMATS = (None, torch.preserve_format, torch.contiguous_format)

Args = Sequence[Any]
Kwargs = Dict[str, Any]


# What the runtime's one-pass kernels read (shared with ``bf16_kernels``).
_strided = kernel_operands.strided
_plain = kernel_operands.plain
_same_or_apart = kernel_operands.same_or_apart
_is_one = kernel_operands.is_one


def _relu(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    (x,) = args
    if kwargs or not _plain(x, _HALF):
        return NOT_HANDLED
    out = _empty(x.shape, dtype=_HALF)
    rt.relu_half(x.data_ptr(), out.data_ptr(), x.numel())
    return out


def _relu_(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    (x,) = args
    if kwargs or not _plain(x, _HALF):
        return NOT_HANDLED
    rt.relu_half(x.data_ptr(), x.data_ptr(), x.numel())
    return x


def _relu_backward(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    if kwargs or len(args) != 3:
        return NOT_HANDLED
    grad, self, threshold = args
    if (
        type(threshold) not in (int, float)
        or threshold != 0
        or not _plain(grad, _HALF)
        or not _plain(self, _HALF)
        or grad.shape != self.shape
    ):
        return NOT_HANDLED
    out = _empty(grad.shape, dtype=_HALF)
    rt.relu_backward_half(grad.data_ptr(), self.data_ptr(), out.data_ptr(), grad.numel())
    return out


def _add_operands(args: Args, kwargs: Kwargs) -> Optional[Sequence[torch.Tensor]]:
    if len(args) != 2 or any(k != "alpha" for k in kwargs) or not _is_one(kwargs.get("alpha", 1)):
        return None
    a, b = args
    if not _plain(a, _HALF) or not _plain(b, _HALF) or a.shape != b.shape:
        return None
    return a, b


def _broadcast(rt: Any, kernel: str, args: Args) -> Any:
    """``a + b`` or ``a * b`` of two fp16 tensors, one broadcast along the other or both of one
    shape in any layouts ``broadcast_layout`` takes, by the runtime's ``kernel``."""
    a, b = args
    if not _strided(a, _HALF) or not _strided(b, _HALF):
        return NOT_HANDLED
    layout = broadcast_layout.plan(a, b)
    if layout is None:
        return NOT_HANDLED
    full = layout.full
    if layout.out_strides is None:
        out = _empty(full.shape, dtype=_HALF)
    else:
        out = _empty_strided(full.shape, layout.out_strides, dtype=_HALF)
    getattr(rt, kernel)(
        full.data_ptr(),
        layout.other.data_ptr(),
        out.data_ptr(),
        full.numel(),
        layout.sizes,
        layout.strides,
    )
    return out


def _add(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    operands = _add_operands(args, kwargs)
    if operands is None:
        if len(args) != 2 or any(k != "alpha" for k in kwargs):
            return NOT_HANDLED
        if not _is_one(kwargs.get("alpha", 1)):
            return NOT_HANDLED
        # torch's fp32 kernel computes a + alpha * b: at alpha 1 the fp32 sum.
        return _broadcast(rt, "add_half_broadcast", args)
    a, b = operands
    out = _empty(a.shape, dtype=_HALF)
    rt.add_half(a.data_ptr(), b.data_ptr(), out.data_ptr(), a.numel())
    return out


def _add_(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    operands = _add_operands(args, kwargs)
    if operands is None or not _same_or_apart(*operands):
        return NOT_HANDLED
    a, b = operands
    rt.add_half(a.data_ptr(), b.data_ptr(), a.data_ptr(), a.numel())
    return a


_FLOAT_MAX = torch.finfo(torch.float32).max
_FLOAT_EXACT_INT = 1 << 24


def _fp32_scalar(value: Any) -> bool:
    """A Python number that reaches torch's fp32 kernel as the float the runtime is given: a
    finite float within the fp32 range (rounded alike) or an integer fp32 holds exactly."""
    if type(value) is float:
        return math.isfinite(value) and abs(value) <= _FLOAT_MAX
    return type(value) is int and abs(value) <= _FLOAT_EXACT_INT


def _with_scalar(kernel: str, in_place: bool) -> Callable[[Any, Args, Kwargs], Any]:
    """``x op number`` (``x.op_(number)`` when ``in_place``) by the runtime's ``kernel``."""

    def run(rt: Any, args: Args, kwargs: Kwargs) -> Any:
        if kwargs or len(args) != 2 or not _plain(args[0], _HALF) or not _fp32_scalar(args[1]):
            return NOT_HANDLED
        x, scalar = args
        out = x if in_place else _empty(x.shape, dtype=_HALF)
        getattr(rt, kernel)(x.data_ptr(), out.data_ptr(), x.numel(), float(scalar))
        return out

    return run


_multiply_by_number = _with_scalar("multiply_half", in_place=False)


def _mul(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    """``a * b``: by a number (``multiply_half``) or of two fp16 tensors (the broadcast
    kernel)."""
    if not kwargs and len(args) == 2 and isinstance(args[1], torch.Tensor):
        return _broadcast(rt, "multiply_half_broadcast", args)
    return _multiply_by_number(rt, args, kwargs)


def _saturated_copy(rt: Any, x: torch.Tensor, shape: Any) -> torch.Tensor:
    out = _empty(shape, dtype=_HALF)
    rt.saturate_half(x.data_ptr(), out.data_ptr(), x.numel())
    return out


def _clone(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    (x,) = args
    if any(k != "memory_format" for k in kwargs):
        return NOT_HANDLED
    memory_format = kwargs.get("memory_format")
    if memory_format in _KEEP_FORMATS and _plain(x, _HALF):
        return _saturated_copy(rt, x, x.shape)
    if memory_format is torch.contiguous_format and _strided(x, _HALF):
        # ``.contiguous()`` of a view: torch gathers the fp16 values (a copy, no arithmetic),
        # then they are stored saturating in place, as the round trip stores them.
        out = _empty(x.shape, dtype=_HALF)
        aten.copy_.default(out, x)
        rt.saturate_half(out.data_ptr(), out.data_ptr(), out.numel())
        return out
    return NOT_HANDLED


def _to_copy(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    """A dtype change (``kernel_operands.dtype_change``)."""
    change = kernel_operands.dtype_change(args, kwargs)
    if change is None:
        return NOT_HANDLED
    x, dtype = change
    if x.dtype == _HALF and dtype == _FLOAT:
        return fp32_copies.to_fp32(x, rt)
    if x.dtype == _HALF and dtype == _HALF and _plain(x, _HALF):
        return _saturated_copy(rt, x, x.shape)
    if x.dtype == _FLOAT and dtype == _HALF and _plain(x, _FLOAT):
        # A host tensor, as every kernel's result: the mode puts it on the input's NPU.
        return saturation.host_to_fp16(x, rt)
    return NOT_HANDLED


def _copy_kernel(dst: Any, src: Any) -> Optional[str]:
    """Which runtime kernel copies ``src`` into the fp16 tensor ``dst`` as the round trip would,
    or None when the pair is not one this file handles."""
    if not _plain(dst, _HALF) or not isinstance(src, torch.Tensor) or src.shape != dst.shape:
        return None
    if _plain(src, _FLOAT):
        return "float_to_half"
    if _plain(src, _HALF) and _same_or_apart(dst, src):
        return "saturate_half"
    return None


def _copy_(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    if kwargs or len(args) != 2:
        return NOT_HANDLED
    dst, src = args
    kernel = _copy_kernel(dst, src)
    if kernel is None:
        return NOT_HANDLED
    getattr(rt, kernel)(src.data_ptr(), dst.data_ptr(), dst.numel())
    return dst


def _pairs_apart(dsts: Sequence[torch.Tensor], srcs: Sequence[torch.Tensor]) -> bool:
    """No memory is shared between the (contiguous) tensors of different pairs. The round trip
    reads every source before it writes any destination; copying pair by pair gives the same
    only when no pair writes what another reads."""
    spans = sorted(
        (t.data_ptr(), t.data_ptr() + t.numel() * t.element_size(), pair)
        for pair, (dst, src) in enumerate(zip(dsts, srcs))
        for t in (dst, src)
    )
    open_spans: List[Tuple[int, int]] = []  # (end, pair) of spans that may reach further ones
    for start, end, pair in spans:
        open_spans = [(e, p) for e, p in open_spans if e > start]
        if any(p != pair for _, p in open_spans):
            return False
        open_spans.append((end, pair))
    return True


def _foreach_copy_(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    """``copy_`` of each pair; every pair is checked before the first is written, so a list
    this file cannot handle whole goes to the round trip untouched."""
    if any(k != "non_blocking" for k in kwargs) or len(args) not in (2, 3):
        return NOT_HANDLED
    dsts, srcs = args[0], args[1]
    if (
        not isinstance(dsts, (list, tuple))
        or not isinstance(srcs, (list, tuple))
        or len(dsts) != len(srcs)
    ):
        return NOT_HANDLED
    kernels = [_copy_kernel(dst, src) for dst, src in zip(dsts, srcs)]
    if None in kernels or not _pairs_apart(dsts, srcs):
        return NOT_HANDLED
    for kernel, dst, src in zip(kernels, dsts, srcs):
        getattr(rt, kernel)(src.data_ptr(), dst.data_ptr(), dst.numel())
    return None


def _fp16_fill_value(value: Any) -> bool:
    """A Python number within ±65504: torch's fp16 kernels take it (they refuse larger ones)
    and round it to fp16 through fp32, as the round trip's store does, with nothing to
    saturate."""
    return type(value) in (int, float) and abs(value) <= saturation.FP16_MAX  # False for NaN


def _fill_bits(value: float) -> int:
    """The fp16 bits the round trip stores for a fill value within ±65504: torch rounds the
    number to fp32 for an fp32 kernel, the store rounds that to fp16 (two roundings, as here)."""
    as_float = struct.unpack("<f", struct.pack("<f", value))[0]
    return struct.unpack("<H", struct.pack("<e", as_float))[0]


def _mask_period(mask: torch.Tensor, shape: torch.Size) -> int:
    """The number of entries after which a contiguous mask repeats along a tensor of ``shape``
    (its shape, leading ones aside, is the tensor's trailing dimensions: a mask broadcast over
    the leading ones only), else 0."""
    if not mask.is_contiguous():
        return 0
    dims = list(mask.shape)
    while dims and dims[0] == 1:
        dims.pop(0)
    if dims != list(shape[len(shape) - len(dims) :]):
        return 0
    return max(mask.numel(), 1)


def _masked_fill(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    """``masked_fill`` selects, it computes nothing: the fill value rounded as the round trip
    rounds it, else the input's bits stored saturating (NaN and inf, reported), as the round
    trip stores them. A mask repeating along the input (attention's causal mask over batches
    and heads) is applied in one runtime pass; other broadcasts run torch's fp16 kernel, whose
    result is then stored saturating in place."""
    if kwargs or len(args) != 3:
        return NOT_HANDLED
    x, mask, value = args
    if (
        not _plain(x, _HALF)
        or not isinstance(mask, torch.Tensor)
        or mask.dtype != torch.bool
        or not _is_cpu(mask)
        or mask.dim() > x.dim()
        or not _fp16_fill_value(value)
    ):
        return NOT_HANDLED
    try:
        if torch.broadcast_shapes(mask.shape, x.shape) != x.shape:
            return NOT_HANDLED
    except RuntimeError:
        return NOT_HANDLED  # the round trip raises torch's own error
    period = _mask_period(mask, x.shape)
    if period:
        out = _empty(x.shape, dtype=_HALF)
        rt.masked_fill_half(
            x.data_ptr(), mask.data_ptr(), out.data_ptr(), x.numel(), period, _fill_bits(value)
        )
        return out
    out = aten.masked_fill.Scalar(x, mask, value)
    if not out.is_contiguous():
        return NOT_HANDLED
    rt.saturate_half(out.data_ptr(), out.data_ptr(), out.numel())
    return out


def _neg(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    """``-x`` is exact: torch's fp16 kernel flips the sign (any layout; its result laid out as
    the round trip's), then the result is stored saturating in place (NaN -> +0, inf ->
    +-65504, reported), as the round trip stores it."""
    (x,) = args
    if kwargs or not _strided(x, _HALF):
        return NOT_HANDLED
    out = aten.neg.default(x)
    if not fp32_copies.non_overlapping_and_dense(out.shape, out.stride()):
        return NOT_HANDLED
    rt.saturate_half(out.data_ptr(), out.data_ptr(), out.numel())
    return out


def _zero_(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    (x,) = args
    if kwargs or not isinstance(x, torch.Tensor) or x.dtype != _HALF:
        return NOT_HANDLED
    return aten.zero_.default(x)


def _cat(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    tensors = args[0] if args else None
    if (
        kwargs
        or len(args) > 2
        or not isinstance(tensors, (list, tuple))
        or not tensors
        or not all(_strided(t, _HALF) for t in tensors)
    ):
        return NOT_HANDLED
    out = aten.cat.default(*args)  # any input layout: torch gathers the values
    if not out.is_contiguous():
        return NOT_HANDLED
    rt.saturate_half(out.data_ptr(), out.data_ptr(), out.numel())
    return out


def _pair(value: Any, default: Optional[Sequence[int]] = None) -> Optional[Sequence[int]]:
    """A pooling size as torch reads it: one int for both sides or two; empty: ``default``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        return None
    if len(value) == 0:
        return default
    if len(value) == 1:
        return (value[0], value[0])
    return tuple(value) if len(value) == 2 else None


def _pooled_size(size: int, kernel: int, stride: int, pad: int, dilation: int, ceil: bool) -> int:
    """torch's pooling_output_shape."""
    out = (size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil else 0)) // stride + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _max_pool2d(rt: Any, args: Args, kwargs: Kwargs) -> Any:
    """``max_pool2d_with_indices`` of a contiguous fp16 (N,)C,H,W tensor laid out as NCHW (more
    than one channel and one pixel, so torch takes its contiguous kernel); arguments torch would
    refuse go to the round trip, which raises torch's error."""
    if kwargs or not 2 <= len(args) <= 6 or not _plain(args[0], _HALF):
        return NOT_HANDLED
    x = args[0]
    kernel = _pair(args[1])
    stride = _pair(args[2] if len(args) > 2 else [], kernel)
    pad = _pair(args[3] if len(args) > 3 else 0)
    dilation = _pair(args[4] if len(args) > 4 else 1)
    ceil = args[5] if len(args) > 5 else False
    if (
        kernel is None
        or stride is None
        or pad is None
        or dilation is None
        or not isinstance(ceil, bool)
        or x.dim() not in (3, 4)
    ):
        return NOT_HANDLED
    *lead, height, width = x.shape
    if (
        (x.dim() == 4 and lead[1] < 2)
        or height * width < 2
        or min(kernel + stride + dilation) < 1
        or min(pad) < 0
        or pad[0] > kernel[0] // 2
        or pad[1] > kernel[1] // 2
    ):
        return NOT_HANDLED
    out_h = _pooled_size(height, kernel[0], stride[0], pad[0], dilation[0], ceil)
    out_w = _pooled_size(width, kernel[1], stride[1], pad[1], dilation[1], ceil)
    if out_h < 1 or out_w < 1:
        return NOT_HANDLED
    planes = x.numel() // (height * width)
    out = _empty((*lead, out_h, out_w), dtype=_HALF)
    indices = _empty((*lead, out_h, out_w), dtype=torch.int64)
    rt.max_pool2d_half(
        x.data_ptr(),
        out.data_ptr(),
        indices.data_ptr(),
        planes,
        height,
        width,
        out_h,
        out_w,
        kernel[0],
        kernel[1],
        stride[0],
        stride[1],
        pad[0],
        pad[1],
        dilation[0],
        dilation[1],
    )
    return (out, indices)


_KERNELS: Dict[Any, Callable[[Any, Args, Kwargs], Any]] = {
    aten.relu.default: _relu,
    aten.relu_.default: _relu_,
    aten.threshold_backward.default: _relu_backward,
    aten.add.Tensor: _add,
    aten.add_.Tensor: _add_,
    aten.mul.Tensor: _mul,
    aten.mul.Scalar: _with_scalar("multiply_half", in_place=False),
    aten.mul_.Tensor: _with_scalar("multiply_half", in_place=True),
    aten.mul_.Scalar: _with_scalar("multiply_half", in_place=True),
    aten.div.Tensor: _with_scalar("divide_half", in_place=False),
    aten.div.Scalar: _with_scalar("divide_half", in_place=False),
    aten.div_.Tensor: _with_scalar("divide_half", in_place=True),
    aten.div_.Scalar: _with_scalar("divide_half", in_place=True),
    aten.clone.default: _clone,
    aten._to_copy.default: _to_copy,
    aten.copy_.default: _copy_,
    aten.zero_.default: _zero_,
    aten.neg.default: _neg,
    aten.masked_fill.Scalar: _masked_fill,
    aten.cat.default: _cat,
    aten.max_pool2d_with_indices.default: _max_pool2d,
}
try:  # torch 2.1 and later
    _KERNELS[aten._foreach_copy_.default] = _foreach_copy_
except (AttributeError, RuntimeError):  # pragma: no cover - torch 1.13 has no _foreach_copy_
    pass


# The runtime's newest kernel: a runtime module built before it lacks some this file calls.
_NEWEST_KERNEL = "multiply_half_broadcast"


def run(func: Any, args: Args, kwargs: Kwargs, rt: Optional[Any]) -> Any:
    """The op's result computed without the round trip, or NOT_HANDLED."""
    kernel = _KERNELS.get(func)
    if kernel is None or rt is None or not hasattr(rt, _NEWEST_KERNEL):
        return NOT_HANDLED
    return kernel(rt, args, kwargs)
