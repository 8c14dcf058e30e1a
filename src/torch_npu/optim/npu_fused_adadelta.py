"""``torch_npu.optim.NpuFusedAdadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0)``:
torch.optim.Adadelta over combined buffers."""

from __future__ import annotations

from . import _optimizer_kinds as optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase

__all__ = ["NpuFusedAdadelta"]


class NpuFusedAdadelta(NpuFusedOptimizerBase):
    """Adadelta, as torch.optim.Adadelta."""

    KIND = optimizer_kinds.ADADELTA
