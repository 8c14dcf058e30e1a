"""NpuFusedAdadelta: torch.optim.Adadelta over combined buffers (``optimizer_kinds.Adadelta``)."""

from __future__ import annotations

from . import optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase


class NpuFusedAdadelta(NpuFusedOptimizerBase):
    """Adadelta, as torch.optim.Adadelta."""

    KIND = optimizer_kinds.ADADELTA
