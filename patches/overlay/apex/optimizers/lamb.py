"""Lamb: LAMB with the signature of the reference implementation, fused like NpuFusedLamb.

Beside the moments, each parameter's state holds the ``weight_norm`` (clamped to [0, 10]),
``adam_norm`` and ``trust_ratio`` of its last step, as the reference keeps them (checkpoints
carry them both ways). Computing them needs the per-parameter norms in Python, so Lamb always
takes the torch-operations path; NpuFusedLamb, which keeps no such state, has the runtime kernel.
"""
from __future__ import annotations

from .npu_fused_lamb import NpuFusedLamb


class Lamb(NpuFusedLamb):
    """LAMB; ``adam=True`` turns the trust ratio off (it is still recorded). See NpuFusedLamb."""

    RUNTIME_KIND = None
    RECORDS_NORMS = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0, adam=False):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         adam=adam, use_global_grad_norm=False)
