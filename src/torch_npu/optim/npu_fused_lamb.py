"""``torch_npu.optim.NpuFusedLamb(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6,
weight_decay=0, adam=False, use_global_grad_norm=False)``: LAMB (You et al., "Large Batch
Optimization for Deep Learning") over combined buffers."""

from __future__ import annotations

from typing import Dict, Optional

import torch

from . import _optimizer_kinds as optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase

__all__ = ["NpuFusedLamb"]


class NpuFusedLamb(NpuFusedOptimizerBase):
    """LAMB as torch_npu's (``optimizer_kinds.Lamb``; ``adam=True``: no trust ratio).
    ``use_global_grad_norm``: the gradients of every group are divided by their global L2 norm
    when it exceeds 1 (the gradients themselves are left as they are)."""

    KIND = optimizer_kinds.LAMB

    @property
    def global_grad_norm(self) -> torch.Tensor:
        """The gradients' global norm at the last step (with use_global_grad_norm), 1 before.
        Made on first use: a tensor made as the module is imported would start torch's compiler
        stack (and FSDP) with ``import torch_npu``."""
        norm = self.__dict__.get("_last_global_grad_norm")
        return torch.ones(()) if norm is None else norm

    def _before_group_steps(self) -> None:
        if not self.use_global_grad_norm:
            return
        norms = [b.grad.float().norm() for b in self._buckets]
        self._last_global_grad_norm = torch.stack(norms).norm() if norms else torch.zeros(())

    def _global_grad_norm(self) -> float:
        # The kernel divides by it when it exceeds 1; 1.0 leaves the gradients as they are.
        return float(self.global_grad_norm) if self.use_global_grad_norm else 1.0

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        options = self.KIND.runtime_options(group)
        return dict(
            options, adam=bool(self.adam), use_global_grad_norm=bool(self.use_global_grad_norm)
        )

    def _torch_update(self, group: Dict, flat: optimizer_kinds.FlatStep) -> None:
        norm = self._global_grad_norm()
        grad = flat.grad / norm if norm > 1.0 else flat.grad
        self.KIND.update(group, flat, grad, adam=bool(self.adam))
