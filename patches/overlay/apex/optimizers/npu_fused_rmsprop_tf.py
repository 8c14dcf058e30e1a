"""NpuFusedRMSpropTF: TensorFlow-style RMSprop (timm's RMSpropTF) over combined buffers
(``optimizer_kinds.RMSpropTF``)."""

from __future__ import annotations

from . import optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase


class NpuFusedRMSpropTF(NpuFusedOptimizerBase):
    """RMSprop as TensorFlow computes it (timm's RMSpropTF). The squared average starts at
    zero, as in Ascend's apex (timm's RMSpropTF starts it at one), so weights and checkpoints
    match Ascend's from the first step."""

    KIND = optimizer_kinds.RMSPROP_TF
