"""fp16 stores with NPU saturation: beyond ±65504 clamp, NaN becomes +0, and the float status is
set (the NPU stores no fp16 inf or NaN). In INF/NAN mode (see ``overflow_mode``) a store rounds
as IEEE does: overflow gives inf, NaN stays NaN, and the status is left alone.

bf16 stores (a 910B's) round once to nearest even; in saturation mode they clamp at bf16's
largest finite value and store NaN as +0, raising the status, as fp16 stores do. In INF/NAN mode
every NaN is stored as the default quiet NaN 0x7FC0: torch's own conversion stores NaN as its
code path likes (0xFFFF in x86 vector code, 0x7FC0 in scalar code), and which NaN an fp32
operation returns depends on its operands' order, so one pattern makes the bits the same
whichever code computed them (the runtime's ``exec/bf16.h`` has the same rule).

The runtime's ``float_to_half`` and ``float_to_bf16`` do it in one pass when built (and not
forced off with ``APEXNPU_OPTIM_PATH=torch``); otherwise torch operations do.
"""

from __future__ import annotations

from typing import Any

import torch

from .. import _runtime
from .._device import placement
from . import float_status, overflow_mode

FP16_MAX = 65504.0
BF16_MAX = float(torch.finfo(torch.bfloat16).max)
_FLOAT = torch.float32
_empty = torch._C._VariableFunctions.empty


def overflows_fp16(values: torch.Tensor) -> bool:
    """True when storing ``values`` as fp16 would leave the fp16 range (or they are inf/NaN)."""
    if values.layout is torch.sparse_coo:  # a sparse gradient (nn.Embedding(sparse=True)'s)
        values = values._values()
    if values.numel() == 0 or values._is_zerotensor():  # autograd's zeros: nothing stored
        return False
    lowest, highest = torch.aminmax(values)
    # NaN fails both comparisons.
    return not (bool(lowest >= -FP16_MAX) and bool(highest <= FP16_MAX))


def _saturated(values: torch.Tensor) -> torch.Tensor:
    """Values beyond +-65504 clamped to it and NaN stored as +0, as the runtime's kernels do."""
    if values.layout is torch.sparse_coo:  # the same indices, their values saturated
        out = torch.sparse_coo_tensor(values._indices(), _saturated(values._values()), values.shape)
        return out._coalesced_(values.is_coalesced())
    return torch.nan_to_num(values, nan=0.0).clamp(-FP16_MAX, FP16_MAX)


_LOOKUP = object()


def _runtime_convert(values: torch.Tensor, out: torch.Tensor, rt: Any = _LOOKUP) -> bool:
    """Convert fp32 ``values`` into fp16 ``out`` in the runtime; False when it cannot."""
    if (
        values.dtype != torch.float32
        or not values.is_contiguous()
        or not out.is_contiguous()
        or values.numel() != out.numel()
        or values.numel() == 0
        or not values.data_ptr()  # a ZeroTensor has no memory to read
    ):
        return False
    if rt is _LOOKUP:
        rt = _runtime.runtime_kernels()
    if rt is None:
        return False
    rt.float_to_half(values.data_ptr(), out.data_ptr(), values.numel())
    return True


def to_fp16(values: torch.Tensor, rt: Any = _LOOKUP) -> torch.Tensor:
    """``values`` (any float dtype) as fp16, saturated to ±65504; sets the float status on
    overflow. ``rt``: the runtime as ``_runtime.runtime_kernels()`` gives it, if the caller has
    it."""
    if overflow_mode.inf_nan():
        return values.to(torch.float16)
    if rt is _LOOKUP:
        rt = _runtime.runtime_kernels()
    if placement.npu_of(values) is None:
        # A host tensor (every fp32 result inside the dispatch mode, which places outputs
        # itself): torch's own maker, without the emulator's device handling around it.
        return host_to_fp16(values, rt)
    out = torch.empty(values.shape, dtype=torch.float16, device=values.device)
    if _runtime_convert(values, out, rt):
        return out
    return _saturating_cast(values)


def host_to_fp16(values: torch.Tensor, rt: Any) -> torch.Tensor:
    """``to_fp16`` of a host tensor in saturation mode (the fast path's results): a contiguous
    fp32 tensor goes straight to the runtime when there is one."""
    n = values.numel()
    # A ZeroTensor (torch._efficientzerotensor: autograd's zeros) has no memory to read.
    if (
        rt is not None
        and n
        and values.dtype == _FLOAT
        and values.layout == torch.strided  # a sparse tensor's values are not its memory
        and values.is_contiguous()
        and values.data_ptr()
    ):
        out = _empty(values.shape, dtype=torch.float16)
        rt.float_to_half(values.data_ptr(), out.data_ptr(), n)
        return out
    return _saturating_cast(values)


def _within_fp16(values: torch.Tensor) -> torch.Tensor:
    """``values`` saturated to the fp16 range, the float status set, when they leave it."""
    if overflows_fp16(values):
        float_status.set()
        return _saturated(values)
    return values


def _saturating_cast(values: torch.Tensor) -> torch.Tensor:
    return _within_fp16(values).to(torch.float16)


def store_fp16(dst: torch.Tensor, values: torch.Tensor, rt: Any = _LOOKUP) -> None:
    """Write ``values`` into the fp16 tensor ``dst`` in place, saturated."""
    if dst.shape != values.shape:
        dst.resize_(values.shape)
    if overflow_mode.inf_nan():
        dst.copy_(values)
        return
    if _runtime_convert(values, dst, rt):
        return
    dst.copy_(_within_fp16(values))


def _within_bf16(values: torch.Tensor) -> torch.Tensor:
    """``values`` clamped to bf16's finite range, NaN as +0, the status set, when they leave it
    (a value rounding up past the largest bf16 is beyond it too)."""
    if values.numel() == 0:
        return values
    lowest, highest = torch.aminmax(values)
    if bool(lowest >= -BF16_MAX) and bool(highest <= BF16_MAX):
        return values
    float_status.set()
    return torch.nan_to_num(values, nan=0.0).clamp(-BF16_MAX, BF16_MAX)


BF16_NAN_BITS = 0x7FC0  # the one NaN a bf16 store leaves in INF/NAN mode


def one_nan(out: torch.Tensor) -> torch.Tensor:
    """The bf16 tensor ``out`` with every NaN made 0x7FC0, in place."""
    nan = torch.isnan(out)
    if bool(nan.any()):
        out.view(torch.int16).masked_fill_(nan, BF16_NAN_BITS)
    return out


def _runtime_for_bf16(values: torch.Tensor, rt: Any) -> Any:
    """The runtime when it stores the fp32 ``values`` as bf16 in one pass (a contiguous,
    non-empty fp32 tensor, a runtime with the bf16 kernels), else None."""
    if values.dtype != _FLOAT or not values.is_contiguous() or values.numel() == 0:
        return None
    if rt is _LOOKUP:
        rt = _runtime.runtime_kernels()
    return rt if rt is not None and hasattr(rt, "float_to_bf16") else None


def to_bf16(values: torch.Tensor, rt: Any = _LOOKUP) -> torch.Tensor:
    """``values`` (fp32) as bf16, rounded once to nearest even; saturating outside INF/NAN
    mode, one NaN pattern in it. ``rt``: as for ``to_fp16``."""
    rt = _runtime_for_bf16(values, rt)
    if rt is not None:
        if placement.npu_of(values) is None:
            out = _empty(values.shape, dtype=torch.bfloat16)
        else:
            out = torch.empty(values.shape, dtype=torch.bfloat16, device=values.device)
        rt.float_to_bf16(
            values.data_ptr(), out.data_ptr(), out.numel(), not overflow_mode.inf_nan()
        )
        return out
    if not overflow_mode.inf_nan():
        return _within_bf16(values).to(torch.bfloat16)
    return one_nan(values.to(torch.bfloat16))


def host_to_bf16(values: torch.Tensor, rt: Any, inf_nan: bool) -> torch.Tensor:
    """``to_bf16`` of a host tensor (the fast path's results), in the mode ``inf_nan`` says: a
    contiguous fp32 tensor goes straight to the runtime when there is one."""
    n = values.numel()
    if rt is not None and n and values.dtype == _FLOAT and values.is_contiguous():
        convert = getattr(rt, "float_to_bf16", None)
        if convert is not None:
            out = _empty(values.shape, dtype=torch.bfloat16)
            convert(values.data_ptr(), out.data_ptr(), n, not inf_nan)
            return out
    return to_bf16(values, None)


def store_bf16(dst: torch.Tensor, values: torch.Tensor, rt: Any = _LOOKUP) -> None:
    """Write ``values`` into the bf16 tensor ``dst`` in place, rounded once."""
    if dst.shape != values.shape:
        dst.resize_(values.shape)
    rt = _runtime_for_bf16(values, rt) if dst.is_contiguous() else None
    if rt is not None:
        rt.float_to_bf16(
            values.data_ptr(), dst.data_ptr(), dst.numel(), not overflow_mode.inf_nan()
        )
        return
    if not overflow_mode.inf_nan():
        dst.copy_(_within_bf16(values))
        return
    dst.copy_(values)
    one_nan(dst)


def to_reduced(values: torch.Tensor, dtype: torch.dtype, rt: Any = _LOOKUP) -> torch.Tensor:
    """``values`` as the reduced ``dtype`` (fp16 or bf16) the NPU stores."""
    return to_bf16(values, rt) if dtype == torch.bfloat16 else to_fp16(values, rt)


def store_reduced(dst: torch.Tensor, values: torch.Tensor, rt: Any = _LOOKUP) -> None:
    """Write ``values`` into ``dst`` (fp16 or bf16) as the NPU stores it."""
    if dst.dtype == torch.bfloat16:
        store_bf16(dst, values, rt)
    else:
        store_fp16(dst, values, rt)
