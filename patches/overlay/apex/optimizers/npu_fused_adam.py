"""NpuFusedAdam: torch.optim.Adam over combined buffers (``optimizer_kinds.Adam``)."""

from __future__ import annotations

from typing import Dict

from . import optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase


class NpuFusedAdam(NpuFusedOptimizerBase):
    """Adam (L2 weight decay added to the gradient, optional AMSGrad), as torch.optim.Adam."""

    KIND = optimizer_kinds.ADAM

    def __setstate__(self, state: Dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
