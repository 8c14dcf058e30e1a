"""fp16 stores with NPU saturation: beyond ±65504 clamp and set the float status (no fp16 inf)."""
from __future__ import annotations

import torch

from . import float_status

FP16_MAX = 65504.0


def overflows_fp16(values: torch.Tensor) -> bool:
    """True when storing ``values`` as fp16 would leave the fp16 range (or they are inf/NaN)."""
    if values.numel() == 0:
        return False
    # NaN compares False, so check finiteness first.
    return bool((~torch.isfinite(values)).any() or (values.abs() > FP16_MAX).any())


def to_fp16(values: torch.Tensor) -> torch.Tensor:
    """``values`` (any float dtype) as fp16, saturated to ±65504; sets the float status on overflow."""
    if overflows_fp16(values):
        float_status.set()
        values = values.clamp(-FP16_MAX, FP16_MAX)
    return values.to(torch.float16)


def store_fp16(dst: torch.Tensor, values: torch.Tensor) -> None:
    """Write ``values`` into the fp16 tensor ``dst`` in place, saturated."""
    if dst.shape != values.shape:
        dst.resize_(values.shape)
    if overflows_fp16(values):
        float_status.set()
        values = values.clamp(-FP16_MAX, FP16_MAX)
    dst.copy_(values)
