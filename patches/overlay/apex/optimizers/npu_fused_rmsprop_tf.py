"""NpuFusedRMSpropTF: TensorFlow-style RMSprop (timm's RMSpropTF) over combined buffers."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .combined_params import FlatTensors
from .npu_fused_optim_base import NpuFusedOptimizerBase, check_non_negative
from .npu_fused_rmsprop import rmsprop_options, rmsprop_state_spec


class NpuFusedRMSpropTF(NpuFusedOptimizerBase):
    """RMSprop as TensorFlow computes it (timm's RMSpropTF).

    Differences from torch's RMSprop: eps is added inside the square root, the averages update
    as ``avg += (x - avg) * (1 - alpha)``, weight decay may be decoupled (``decoupled_decay``),
    and the learning rate may be applied inside the momentum buffer (``lr_in_momentum``). The
    squared average starts at zero, as in Ascend's apex (timm's RMSpropTF starts it at one), so
    weights and checkpoints match Ascend's from the first step.
    """

    STEP_KIND = "int"
    RUNTIME_KIND = "rmsprop_tf"

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
        check_non_negative(
            "NpuFusedRMSpropTF",
            lr=lr,
            eps=eps,
            weight_decay=weight_decay,
            momentum=momentum,
            alpha=alpha,
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
        return rmsprop_state_spec(group, square_avg_start=0.0)

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        return dict(
            rmsprop_options(group),
            decoupled_decay=group["decoupled_decay"],
            lr_in_momentum=group["lr_in_momentum"],
        )

    def _update(self, group: Dict, flat: FlatTensors) -> None:
        p, grad = flat.param, flat.grad
        lr, one_minus_alpha = group["lr"], 1.0 - group["alpha"]
        if group["weight_decay"] != 0:
            if group["decoupled_decay"]:
                p.mul_(1.0 - lr * group["weight_decay"])
            else:
                grad = grad.add(p, alpha=group["weight_decay"])
        square_avg = flat.state["square_avg"]
        square_avg.add_(grad.pow(2) - square_avg, alpha=one_minus_alpha)
        if group["centered"]:
            grad_avg = flat.state["grad_avg"]
            grad_avg.add_(grad - grad_avg, alpha=one_minus_alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).add(group["eps"]).sqrt_()
        else:
            avg = square_avg.add(group["eps"]).sqrt_()
        if group["momentum"] > 0:
            buf = flat.state["momentum_buffer"]
            if group["lr_in_momentum"]:
                buf.mul_(group["momentum"]).addcdiv_(grad, avg, value=lr)
                p.add_(-buf)
            else:
                buf.mul_(group["momentum"]).addcdiv_(grad, avg)
                p.add_(buf, alpha=-lr)
        else:
            p.addcdiv_(grad, avg, value=-lr)
