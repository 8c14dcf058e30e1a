"""``torch_npu.optim.NpuFusedLamb(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6,
weight_decay=0, adam=False, use_global_grad_norm=False)``: LAMB (You et al., "Large Batch
Optimization for Deep Learning") over combined buffers."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import torch

from . import _checks, _rules
from .npu_fused_optim_base import NpuFusedOptimizerBase

__all__ = ["NpuFusedLamb"]


class NpuFusedLamb(NpuFusedOptimizerBase):
    """LAMB as torch_npu's: Adam moments without bias correction, weight decay added to the
    Adam step, each parameter's step scaled by its trust ratio min(||p||, 10) / ||step||
    (``adam=True``: no trust ratio). ``use_global_grad_norm``: the gradients of every group are
    divided by their global L2 norm when it exceeds 1 (the gradients themselves are left as
    they are)."""

    RUNTIME_KIND = "lamb"

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-6,
        weight_decay=0,
        adam=False,
        use_global_grad_norm=False,
    ):
        _checks.non_negative("NpuFusedLamb", lr=lr, eps=eps, weight_decay=weight_decay)
        _checks.betas("NpuFusedLamb", betas)
        self.adam = adam
        self.use_global_grad_norm = use_global_grad_norm
        self.global_grad_norm = torch.ones(())
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        return [("exp_avg", 0.0), ("exp_avg_sq", 0.0)]

    def _before_group_steps(self) -> None:
        if not self.use_global_grad_norm:
            return
        grads = [b.grad for b in self._buckets]
        norms = [g.float().norm() for g in grads]
        self.global_grad_norm = torch.stack(norms).norm() if norms else torch.zeros(())

    def _global_grad_norm(self) -> float:
        # The kernel divides by it when it exceeds 1; 1.0 leaves the gradients as they are.
        return float(self.global_grad_norm) if self.use_global_grad_norm else 1.0

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        beta1, beta2 = group["betas"]
        return dict(
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            adam=bool(self.adam),
            use_global_grad_norm=bool(self.use_global_grad_norm),
        )

    def _torch_update(self, group: Dict, work) -> Dict:
        _rules.lamb_update(group, work, bool(self.adam), self._global_grad_norm())
        return {}
