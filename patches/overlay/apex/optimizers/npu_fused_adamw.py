"""NpuFusedAdamW: torch.optim.AdamW over combined buffers (``optimizer_kinds.AdamW``)."""

from __future__ import annotations

from . import optimizer_kinds
from .npu_fused_adam import NpuFusedAdam


class NpuFusedAdamW(NpuFusedAdam):
    """Adam with decoupled weight decay, as torch.optim.AdamW."""

    KIND = optimizer_kinds.ADAMW
