"""NpuFusedAdamP: AdamP (Heo et al., 2021, "AdamP: Slowing Down the Slowdown for Momentum
Optimizers on Scale-invariant Weights") over combined buffers."""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F

from .combined_params import FlatTensors
from .npu_fused_optim_base import NpuFusedOptimizerBase, check_betas, check_non_negative


def _channel_view(x: torch.Tensor) -> torch.Tensor:
    return x.view(x.size(0), -1)


def _layer_view(x: torch.Tensor) -> torch.Tensor:
    return x.view(1, -1)


def project_scale_invariant(
    p: torch.Tensor,
    grad: torch.Tensor,
    perturb: torch.Tensor,
    delta: float,
    wd_ratio: float,
    eps: float,
) -> float:
    """Remove from ``perturb`` (in place) its radial part when ``p`` looks scale invariant.

    Returns the weight-decay ratio to apply to ``p``: ``wd_ratio`` when projected, else 1.
    """
    expand_size = [-1] + [1] * (p.dim() - 1)
    for view in (_channel_view, _layer_view):
        cosine = F.cosine_similarity(view(grad), view(p), dim=1, eps=eps).abs_()
        if cosine.max() < delta / math.sqrt(view(p).size(1)):
            p_n = p / view(p).norm(dim=1).view(expand_size).add_(eps)
            perturb.sub_(p_n * view(p_n * perturb).sum(dim=1).view(expand_size))
            return wd_ratio
    return 1.0


class NpuFusedAdamP(NpuFusedOptimizerBase):
    """AdamP: Adam whose update loses its radial part on scale-invariant weights."""

    STEP_KIND = "int"
    RUNTIME_KIND = "adamp"

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        delta=0.1,
        wd_ratio=0.1,
        nesterov=False,
    ):
        check_non_negative(
            "NpuFusedAdamP",
            lr=lr,
            eps=eps,
            weight_decay=weight_decay,
            delta=delta,
            wd_ratio=wd_ratio,
        )
        check_betas("NpuFusedAdamP", betas)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                delta=delta,
                wd_ratio=wd_ratio,
                nesterov=nesterov,
            ),
        )

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        return [("exp_avg", 0.0), ("exp_avg_sq", 0.0)]

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        beta1, beta2 = group["betas"]
        return dict(
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            delta=group["delta"],
            wd_ratio=group["wd_ratio"],
            nesterov=group["nesterov"],
        )

    def _update(self, group: Dict, flat: FlatTensors) -> None:
        beta1, beta2 = group["betas"]
        grad, p = flat.grad, flat.param
        exp_avg, exp_avg_sq = flat.state["exp_avg"], flat.state["exp_avg_sq"]
        bias_correction1 = 1 - beta1**flat.step
        bias_correction2 = 1 - beta2**flat.step
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(group["eps"])
        step_size = group["lr"] / bias_correction1
        if group["nesterov"]:
            perturb = (beta1 * exp_avg + (1 - beta1) * grad) / denom
        else:
            perturb = exp_avg / denom

        ratios = []
        for p_seg, g_seg, u_seg in zip(
            flat.segment_views(p), flat.segment_views(grad), flat.segment_views(perturb)
        ):
            if p_seg.dim() > 1:
                ratios.append(
                    project_scale_invariant(
                        p_seg, g_seg, u_seg, group["delta"], group["wd_ratio"], group["eps"]
                    )
                )
            else:
                ratios.append(1.0)
        if group["weight_decay"] > 0:
            decay = group["lr"] * group["weight_decay"]
            if all(r == 1.0 for r in ratios):
                p.mul_(1 - decay)
            else:
                for p_seg, ratio in zip(flat.segment_views(p), ratios):
                    p_seg.mul_(1 - decay * ratio)
        p.add_(perturb, alpha=-step_size)
