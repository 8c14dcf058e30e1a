"""Lamb: LAMB with the signature of the reference implementation, fused like NpuFusedLamb."""
from __future__ import annotations

from .npu_fused_lamb import NpuFusedLamb


class Lamb(NpuFusedLamb):
    """LAMB; ``adam=True`` turns the trust ratio off. See NpuFusedLamb."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0, adam=False):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         adam=adam, use_global_grad_norm=False)
