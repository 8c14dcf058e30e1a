"""``torch_npu.optim.NpuFusedAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
amsgrad=False)``: torch.optim.Adam over combined buffers."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import torch

from . import _checks, _rules
from .npu_fused_optim_base import NpuFusedOptimizerBase

__all__ = ["NpuFusedAdam"]


class NpuFusedAdam(NpuFusedOptimizerBase):
    """Adam (L2 weight decay added to the gradient, optional AMSGrad), as torch.optim.Adam."""

    RUNTIME_KIND = "adam"
    TORCH_CLASS = torch.optim.Adam
    INIT_STATE_ARGS = ("amsgrad",)

    def __init__(
        self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False
    ):
        name = type(self).__name__
        _checks.non_negative(name, lr=lr, eps=eps, weight_decay=weight_decay)
        _checks.betas(name, betas)
        super().__init__(
            params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad)
        )

    def __setstate__(self, state: Dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        spec: List[Tuple[str, Optional[float]]] = [("exp_avg", 0.0), ("exp_avg_sq", 0.0)]
        if group["amsgrad"]:
            spec.append(("max_exp_avg_sq", 0.0))
        return spec

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        beta1, beta2 = group["betas"]
        return dict(
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            amsgrad=group["amsgrad"],
        )

    def _torch_update(self, group: Dict, work) -> Dict[str, torch.Tensor]:
        return _rules.torch_optim_step(self.TORCH_CLASS, group, work)
