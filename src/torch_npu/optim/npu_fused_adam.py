"""``torch_npu.optim.NpuFusedAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
amsgrad=False)``: torch.optim.Adam over combined buffers."""

from __future__ import annotations

from typing import Dict

from . import _optimizer_kinds as optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase

__all__ = ["NpuFusedAdam"]


class NpuFusedAdam(NpuFusedOptimizerBase):
    """Adam (L2 weight decay added to the gradient, optional AMSGrad), as torch.optim.Adam."""

    KIND = optimizer_kinds.ADAM
    INIT_STATE_ARGS = ("amsgrad",)

    def __setstate__(self, state: Dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
