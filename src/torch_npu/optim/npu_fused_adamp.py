"""``torch_npu.optim.NpuFusedAdamP(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
weight_decay=0, delta=0.1, wd_ratio=0.1, nesterov=False)``: AdamP (Heo et al., 2021) over
combined buffers."""

from __future__ import annotations

from . import _optimizer_kinds as optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase

__all__ = ["NpuFusedAdamP"]


class NpuFusedAdamP(NpuFusedOptimizerBase):
    """AdamP: Adam whose update loses its radial part on scale-invariant weights (weight decay
    scaled by ``wd_ratio`` there)."""

    KIND = optimizer_kinds.ADAMP
