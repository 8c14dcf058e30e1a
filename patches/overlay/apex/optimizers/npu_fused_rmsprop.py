"""NpuFusedRMSprop: torch.optim.RMSprop over combined buffers (``optimizer_kinds.RMSprop``)."""

from __future__ import annotations

from . import optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase


class NpuFusedRMSprop(NpuFusedOptimizerBase):
    """RMSprop (optional momentum, centered), as torch.optim.RMSprop."""

    KIND = optimizer_kinds.RMSPROP
