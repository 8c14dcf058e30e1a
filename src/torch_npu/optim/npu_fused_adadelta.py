"""``torch_npu.optim.NpuFusedAdadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0)``:
torch.optim.Adadelta over combined buffers."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import torch

from . import _checks, _rules
from .npu_fused_optim_base import NpuFusedOptimizerBase

__all__ = ["NpuFusedAdadelta"]


class NpuFusedAdadelta(NpuFusedOptimizerBase):
    """Adadelta, as torch.optim.Adadelta."""

    RUNTIME_KIND = "adadelta"

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0):
        _checks.non_negative("NpuFusedAdadelta", lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"NpuFusedAdadelta: invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay))

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        return [("square_avg", 0.0), ("acc_delta", 0.0)]

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        return dict(
            lr=group["lr"], rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"]
        )

    def _torch_update(self, group: Dict, work) -> Dict[str, torch.Tensor]:
        return _rules.torch_optim_step(torch.optim.Adadelta, group, work)
