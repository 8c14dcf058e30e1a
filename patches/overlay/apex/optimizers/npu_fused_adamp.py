"""NpuFusedAdamP: AdamP (Heo et al., 2021, "AdamP: Slowing Down the Slowdown for Momentum
Optimizers on Scale-invariant Weights") over combined buffers (``optimizer_kinds.AdamP``)."""

from __future__ import annotations

from . import optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase


class NpuFusedAdamP(NpuFusedOptimizerBase):
    """AdamP: Adam whose update loses its radial part on scale-invariant weights."""

    KIND = optimizer_kinds.ADAMP
