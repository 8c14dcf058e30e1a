"""How the emulated NPU's fused operators compute: in fp32, whatever the inputs' dtype, with each
fp16 result stored once at the end with the NPU's saturation (see ``_fp16.saturation``).

``upcast`` gives the fp32 values an operator computes on (differentiable: gradients flowing back
to an fp16 input are rounded to fp16 by the emulation, with saturation, as the NPU's backward
kernels store them). ``store`` rounds an fp32 result to the dtype the operator returns; for fp16
it clamps to ±65504 and sets the float status on overflow (INF/NAN mode: inf), and passes the
gradient back unchanged in fp32.
"""

from __future__ import annotations

from typing import Optional

import torch

from .._device import placement
from .._fp16 import float_status, overflow_mode, saturation

_HALF = torch.float16
_REDUCED = (torch.float16, torch.bfloat16)


def upcast(x: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    """``x`` as the fp32 values the operator computes on (None and non-reduced dtypes as they
    are)."""
    if x is None or not isinstance(x, torch.Tensor) or x.dtype not in _REDUCED:
        return x
    return x.float()


class _SaturatingStore(torch.autograd.Function):
    """fp32 -> fp16 with the NPU's saturation; the backward passes the gradient on in fp32."""

    @staticmethod
    def forward(ctx, values):  # noqa: D102 - torch.autograd.Function protocol
        return saturation.to_fp16(values)

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        return grad.float()


def store(values: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The fp32 result ``values`` of an operator as the ``dtype`` it returns (fp16 saturating)."""
    if dtype == _HALF and values.dtype != _HALF:
        return _SaturatingStore.apply(values)
    if values.dtype != dtype:
        return values.to(dtype)
    return values


def store_into(dst: torch.Tensor, values: torch.Tensor) -> None:
    """Write the fp32 result ``values`` into ``dst`` in place (fp16 saturating), outside autograd
    (optimizer kernels)."""
    with torch.no_grad():
        if dst.dtype == _HALF:
            saturation.store_fp16(dst, values.float())
        else:
            dst.copy_(values)


def store_kernel_result(values: torch.Tensor, dtype: torch.dtype, npu, sources) -> torch.Tensor:
    """An fp32 result of the kernel as the NPU stores it (fp16/bf16 rounded once, saturating
    outside INF/NAN mode; an fp32 overflow to +-FLT_MAX on a 910, unless an inf or NaN came in
    with the ``sources``, as a -inf float mask brings it), on NPU ``npu``."""
    if dtype != torch.float32:
        out = saturation.to_reduced(values, dtype)
    else:
        out = values.contiguous()
        if (
            not overflow_mode.inf_nan()
            and not bool(torch.isfinite(out).all())
            and all(bool(torch.isfinite(t).all()) for t in sources if t is not None)
        ):
            big = torch.finfo(torch.float32).max
            out = torch.nan_to_num(out, nan=0.0, posinf=big, neginf=-big)
            float_status.set()
    return placement.put(out, npu)
