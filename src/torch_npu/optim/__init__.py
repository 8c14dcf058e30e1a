"""``torch_npu.optim``: the NpuFused optimizers on the emulated NPU, with torch_npu's names,
arguments and defaults. Each fuses its parameters, gradients and state into combined buffers
and steps them with the compiled runtime's fused kernels (``torch_npu._apexnpu``, the kernels of
apex's NpuFused optimizers) or, without the runtime, torch operations; ``clip_grad_norm_fused_``
clips all their gradients together."""

# ruff: noqa: F401  (the fronts are imported for __all__: one per kind of _optimizer_kinds)

from . import _optimizer_kinds
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

globals().update(_optimizer_kinds.fronts_lacking(NpuFusedOptimizerBase, globals()))
__all__ = ["NpuFusedOptimizerBase"] + [k.class_name for k in _optimizer_kinds.KINDS.values()]
