"""``torch_npu.optim.NpuFusedRMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0,
momentum=0, centered=False)``: torch.optim.RMSprop over combined buffers."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import torch

from . import _checks, _rules
from .npu_fused_optim_base import NpuFusedOptimizerBase

__all__ = ["NpuFusedRMSprop"]


def rmsprop_state_spec(group: Dict, square_avg_start: float) -> List[Tuple[str, Optional[float]]]:
    spec: List[Tuple[str, Optional[float]]] = [("square_avg", square_avg_start)]
    if group["momentum"] > 0:
        spec.append(("momentum_buffer", 0.0))
    if group["centered"]:
        spec.append(("grad_avg", 0.0))
    return spec


def rmsprop_options(group: Dict) -> Dict:
    return dict(
        lr=group["lr"],
        alpha=group["alpha"],
        eps=group["eps"],
        weight_decay=group["weight_decay"],
        momentum=group["momentum"],
        centered=group["centered"],
    )


class NpuFusedRMSprop(NpuFusedOptimizerBase):
    """RMSprop (optional momentum, centered), as torch.optim.RMSprop."""

    RUNTIME_KIND = "rmsprop"
    INIT_STATE_ARGS = ("momentum", "centered")

    def __init__(
        self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False
    ):
        _checks.non_negative(
            type(self).__name__,
            lr=lr,
            alpha=alpha,
            eps=eps,
            weight_decay=weight_decay,
            momentum=momentum,
        )
        super().__init__(
            params,
            dict(
                lr=lr,
                alpha=alpha,
                eps=eps,
                weight_decay=weight_decay,
                momentum=momentum,
                centered=centered,
            ),
        )

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        return rmsprop_state_spec(group, square_avg_start=0.0)

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        return rmsprop_options(group)

    def _torch_update(self, group: Dict, work) -> Dict[str, torch.Tensor]:
        return _rules.torch_optim_step(torch.optim.RMSprop, group, work)
