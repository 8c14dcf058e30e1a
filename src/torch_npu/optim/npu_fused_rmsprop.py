"""``torch_npu.optim.NpuFusedRMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0,
momentum=0, centered=False)``: torch.optim.RMSprop over combined buffers."""

from __future__ import annotations

from . import _optimizer_kinds as optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase

__all__ = ["NpuFusedRMSprop"]


class NpuFusedRMSprop(NpuFusedOptimizerBase):
    """RMSprop (optional momentum, centered), as torch.optim.RMSprop."""

    KIND = optimizer_kinds.RMSPROP
    INIT_STATE_ARGS = ("momentum", "centered")
