"""``torch_npu.optim.NpuFusedAdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
weight_decay=1e-2, amsgrad=False)``: torch.optim.AdamW over combined buffers."""

from __future__ import annotations

from . import _optimizer_kinds as optimizer_kinds
from .npu_fused_adam import NpuFusedAdam

__all__ = ["NpuFusedAdamW"]


class NpuFusedAdamW(NpuFusedAdam):
    """Adam with decoupled weight decay, as torch.optim.AdamW."""

    KIND = optimizer_kinds.ADAMW
