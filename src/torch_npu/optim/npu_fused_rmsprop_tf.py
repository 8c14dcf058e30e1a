"""``torch_npu.optim.NpuFusedRMSpropTF(params, lr=1e-2, alpha=0.9, eps=1e-10, weight_decay=0,
momentum=0., centered=False, decoupled_decay=False, lr_in_momentum=True)``: timm's RMSpropTF
(RMSprop as TensorFlow computes it) over combined buffers."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from . import _checks, _rules
from .npu_fused_optim_base import NpuFusedOptimizerBase
from .npu_fused_rmsprop import rmsprop_options, rmsprop_state_spec

__all__ = ["NpuFusedRMSpropTF"]


class NpuFusedRMSpropTF(NpuFusedOptimizerBase):
    """RMSprop as TensorFlow computes it: the squared average starts at one, eps inside the
    square root, optional decoupled weight decay and the learning rate inside the momentum."""

    RUNTIME_KIND = "rmsprop_tf"
    INIT_STATE_ARGS = ("momentum", "centered")

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.9,
        eps=1e-10,
        weight_decay=0,
        momentum=0.0,
        centered=False,
        decoupled_decay=False,
        lr_in_momentum=True,
    ):
        _checks.non_negative(
            "NpuFusedRMSpropTF",
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
                decoupled_decay=decoupled_decay,
                lr_in_momentum=lr_in_momentum,
            ),
        )

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        return rmsprop_state_spec(group, square_avg_start=1.0)

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        return dict(
            rmsprop_options(group),
            decoupled_decay=group["decoupled_decay"],
            lr_in_momentum=group["lr_in_momentum"],
        )

    def _torch_update(self, group: Dict, work) -> Dict:
        _rules.rmsprop_tf_update(group, work)
        return {}
