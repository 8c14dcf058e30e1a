"""NpuFusedSGD: torch.optim.SGD over combined buffers."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from torch.optim.optimizer import required

from .combined_params import FlatTensors
from .npu_fused_optim_base import NpuFusedOptimizerBase, check_non_negative

MOMENTUM_MIN = 0.0
DAMPENING_DEFAULT = 0.0
WEIGHT_DECAY_MIN = 0.0


class NpuFusedSGD(NpuFusedOptimizerBase):
    """SGD with momentum, dampening, Nesterov momentum and weight decay, as torch.optim.SGD."""

    STEP_KIND = None
    RUNTIME_KIND = "sgd"

    def __init__(
        self,
        params,
        lr=required,
        momentum=MOMENTUM_MIN,
        dampening=DAMPENING_DEFAULT,
        weight_decay=WEIGHT_DECAY_MIN,
        nesterov=False,
    ):
        if lr is not required:
            check_non_negative("NpuFusedSGD", lr=lr)
        check_non_negative("NpuFusedSGD", momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(
                "NpuFusedSGD: Nesterov momentum requires a momentum and zero dampening"
            )
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
        )
        super().__init__(params, defaults)

    def __setstate__(self, state: Dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        return [("momentum_buffer", None)] if group["momentum"] != 0 else []

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        return dict(
            lr=group["lr"],
            momentum=group["momentum"],
            dampening=group["dampening"],
            weight_decay=group["weight_decay"],
            nesterov=group["nesterov"],
        )

    def _update(self, group: Dict, flat: FlatTensors) -> None:
        p, d_p = flat.param, flat.grad
        if group["weight_decay"] != 0:
            d_p = d_p.add(p, alpha=group["weight_decay"])
        momentum = group["momentum"]
        if momentum != 0:
            buf = flat.state["momentum_buffer"]
            if flat.first_use:
                buf.copy_(d_p)
            else:
                buf.mul_(momentum).add_(d_p, alpha=1 - group["dampening"])
            d_p = d_p.add(buf, alpha=momentum) if group["nesterov"] else buf
        p.add_(d_p, alpha=-group["lr"])
