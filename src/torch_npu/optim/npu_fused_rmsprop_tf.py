"""``torch_npu.optim.NpuFusedRMSpropTF(params, lr=1e-2, alpha=0.9, eps=1e-10, weight_decay=0,
momentum=0., centered=False, decoupled_decay=False, lr_in_momentum=True)``: timm's RMSpropTF
(RMSprop as TensorFlow computes it) over combined buffers."""

from __future__ import annotations

from . import _optimizer_kinds as optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase

__all__ = ["NpuFusedRMSpropTF"]


class NpuFusedRMSpropTF(NpuFusedOptimizerBase):
    """RMSprop as TensorFlow computes it (see ``optimizer_kinds.RMSpropTF``); the squared
    average starts at one, as timm's and torch_npu's (Ascend's apex starts it at zero)."""

    KIND = optimizer_kinds.RMSpropTF(square_avg_start=1.0)
    INIT_STATE_ARGS = ("momentum", "centered")
