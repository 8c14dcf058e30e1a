"""NpuFusedAdam: torch.optim.Adam over combined buffers."""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Tuple

import torch

from .combined_params import FlatTensors
from .npu_fused_optim_base import NpuFusedOptimizerBase, check_betas, check_non_negative


def adam_state_spec(group: Dict) -> List[Tuple[str, Optional[float]]]:
    spec: List[Tuple[str, Optional[float]]] = [("exp_avg", 0.0), ("exp_avg_sq", 0.0)]
    if group["amsgrad"]:
        spec.append(("max_exp_avg_sq", 0.0))
    return spec


def adam_moments_step(group: Dict, flat: FlatTensors, grad: torch.Tensor) -> None:
    """The Adam moment update and parameter step (weight decay already applied)."""
    beta1, beta2 = group["betas"]
    exp_avg, exp_avg_sq = flat.state["exp_avg"], flat.state["exp_avg_sq"]
    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bias_correction1 = 1 - beta1**flat.step
    bias_correction2_sqrt = math.sqrt(1 - beta2**flat.step)
    step_size = group["lr"] / bias_correction1
    if group["amsgrad"]:
        max_exp_avg_sq = flat.state["max_exp_avg_sq"]
        torch.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(group["eps"])
    else:
        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(group["eps"])
    flat.param.addcdiv_(exp_avg, denom, value=-step_size)


class NpuFusedAdam(NpuFusedOptimizerBase):
    """Adam (L2 weight decay added to the gradient, optional AMSGrad), as torch.optim.Adam."""

    STEP_KIND = "int"  # a number in state_dict, as Ascend's apex writes and reads it
    RUNTIME_KIND = "adam"

    def __init__(
        self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False
    ):
        check_non_negative(type(self).__name__, lr=lr, eps=eps, weight_decay=weight_decay)
        check_betas(type(self).__name__, betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad)
        super().__init__(params, defaults)

    def __setstate__(self, state: Dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        return adam_state_spec(group)

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

    def _update(self, group: Dict, flat: FlatTensors) -> None:
        grad = flat.grad
        if group["weight_decay"] != 0:
            grad = grad.add(flat.param, alpha=group["weight_decay"])
        adam_moments_step(group, flat, grad)
