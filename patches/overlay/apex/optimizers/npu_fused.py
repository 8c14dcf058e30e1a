"""The NPU edition's optimizers, the one list that ``apex.optimizers`` exports.

Every kind of ``optimizer_kinds`` has its class here: from its module where Ascend's apex has one
(the import paths scripts use) or where apex computes otherwise, else made from its description
(``fronts_lacking``). Lamb and LAMB are apex's own LAMB variants.
"""

# ruff: noqa: F401  (the fronts are imported for __all__: one per kind of optimizer_kinds)

from __future__ import annotations

from . import optimizer_kinds
from .lamb import LAMB, Lamb
from .npu_fused_adadelta import NpuFusedAdadelta
from .npu_fused_adam import NpuFusedAdam
from .npu_fused_adamp import NpuFusedAdamP
from .npu_fused_adamw import NpuFusedAdamW
from .npu_fused_bert_adam import NpuFusedBertAdam
from .npu_fused_lamb import NpuFusedLamb
from .npu_fused_optim_base import NpuFusedOptimizerBase
from .npu_fused_rmsprop import NpuFusedRMSprop
from .npu_fused_rmsprop_tf import NpuFusedRMSpropTF
from .npu_fused_sgd import NpuFusedSGD

globals().update(optimizer_kinds.fronts_lacking(NpuFusedOptimizerBase, globals()))
__all__ = ["Lamb", "LAMB"] + [kind.class_name for kind in optimizer_kinds.KINDS.values()]
