"""``torch_npu.optim.NpuFusedAdamP(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
weight_decay=0, delta=0.1, wd_ratio=0.1, nesterov=False)``: AdamP (Heo et al., 2021) over
combined buffers."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from . import _checks, _rules
from .npu_fused_optim_base import NpuFusedOptimizerBase

__all__ = ["NpuFusedAdamP"]


class NpuFusedAdamP(NpuFusedOptimizerBase):
    """AdamP: Adam whose update loses its radial part on scale-invariant weights (weight decay
    scaled by ``wd_ratio`` there)."""

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
        _checks.non_negative(
            "NpuFusedAdamP",
            lr=lr,
            eps=eps,
            weight_decay=weight_decay,
            delta=delta,
            wd_ratio=wd_ratio,
        )
        _checks.betas("NpuFusedAdamP", betas)
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

    def _torch_update(self, group: Dict, work) -> Dict:
        _rules.adamp_update(group, work)
        return {}
