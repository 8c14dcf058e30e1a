"""NpuFusedAdamW: torch.optim.AdamW over combined buffers."""

from __future__ import annotations

from typing import Dict

from .combined_params import FlatTensors
from .npu_fused_adam import NpuFusedAdam, adam_moments_step


class NpuFusedAdamW(NpuFusedAdam):
    """Adam with decoupled weight decay, as torch.optim.AdamW."""

    RUNTIME_KIND = "adamw"

    def __init__(
        self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False
    ):
        super().__init__(
            params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad
        )

    def _update(self, group: Dict, flat: FlatTensors) -> None:
        flat.param.mul_(1 - group["lr"] * group["weight_decay"])
        adam_moments_step(group, flat, flat.grad)
