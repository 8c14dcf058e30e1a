"""The NPU edition's optimizers, the one list that ``apex.optimizers`` exports.

A new optimizer is its module here and one line in ``__all__``; each class with a runtime
kernel names its kind in ``RUNTIME_KIND``, one of the runtime registry's kinds
(``apex._apexnpu.OPTIMIZER_CLASSES`` maps each kind back to its class).
"""

from __future__ import annotations

from .lamb import LAMB, Lamb
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
    "NpuFusedSGD",
    "NpuFusedAdam",
    "NpuFusedAdamW",
    "NpuFusedAdamP",
    "NpuFusedBertAdam",
    "NpuFusedAdadelta",
    "Lamb",
    "LAMB",
    "NpuFusedLamb",
    "NpuFusedRMSprop",
    "NpuFusedRMSpropTF",
]
