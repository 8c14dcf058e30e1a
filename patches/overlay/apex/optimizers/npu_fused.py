"""All fused optimizers of the NPU build, for ``apex.optimizers`` to export."""
from __future__ import annotations

from .lamb import Lamb
from .npu_fused_adadelta import NpuFusedAdadelta
from .npu_fused_adam import NpuFusedAdam
from .npu_fused_adamp import NpuFusedAdamP
from .npu_fused_adamw import NpuFusedAdamW
from .npu_fused_bert_adam import NpuFusedBertAdam
from .npu_fused_lamb import NpuFusedLamb
from .npu_fused_rmsprop import NpuFusedRMSprop
from .npu_fused_rmsprop_tf import NpuFusedRMSpropTF
from .npu_fused_sgd import NpuFusedSGD

__all__ = [
    "NpuFusedSGD", "NpuFusedAdam", "NpuFusedAdamW", "NpuFusedAdamP", "NpuFusedBertAdam",
    "NpuFusedAdadelta", "Lamb", "NpuFusedLamb", "NpuFusedRMSprop", "NpuFusedRMSpropTF",
]
