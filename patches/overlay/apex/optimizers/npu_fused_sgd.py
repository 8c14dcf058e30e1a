"""NpuFusedSGD: torch.optim.SGD over combined buffers (``optimizer_kinds.Sgd``)."""

from __future__ import annotations

from typing import Dict


from . import optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase


class NpuFusedSGD(NpuFusedOptimizerBase):
    """SGD with momentum, dampening, Nesterov momentum and weight decay, as torch.optim.SGD."""

    KIND = optimizer_kinds.SGD

    def __setstate__(self, state: Dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
