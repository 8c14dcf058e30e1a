"""NpuFusedRMSprop: torch.optim.RMSprop over combined buffers."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .combined_params import FlatTensors
from .npu_fused_optim_base import NpuFusedOptimizerBase, check_non_negative


def rmsprop_state_spec(group: Dict, square_avg_start: float) -> List[Tuple[str, Optional[float]]]:
    """The state an RMSprop variant keeps for `group`, with each buffer's starting value."""
    spec: List[Tuple[str, Optional[float]]] = [("square_avg", square_avg_start)]
    if group["momentum"] > 0:
        spec.append(("momentum_buffer", 0.0))
    if group["centered"]:
        spec.append(("grad_avg", 0.0))
    return spec


def rmsprop_options(group: Dict) -> Dict:
    """The runtime options every RMSprop variant passes."""
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

    STEP_KIND = "int"
    RUNTIME_KIND = "rmsprop"

    def __init__(
        self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False
    ):
        check_non_negative(
            "NpuFusedRMSprop",
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
            ),
        )

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        return rmsprop_state_spec(group, square_avg_start=0.0)

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        return rmsprop_options(group)

    def _update(self, group: Dict, flat: FlatTensors) -> None:
        alpha = group["alpha"]
        grad = flat.grad
        if group["weight_decay"] != 0:
            grad = grad.add(flat.param, alpha=group["weight_decay"])
        square_avg = flat.state["square_avg"]
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if group["centered"]:
            grad_avg = flat.state["grad_avg"]
            grad_avg.mul_(alpha).add_(grad, alpha=1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(group["eps"])
        if group["momentum"] > 0:
            buf = flat.state["momentum_buffer"]
            buf.mul_(group["momentum"]).addcdiv_(grad, avg)
            flat.param.add_(buf, alpha=-group["lr"])
        else:
            flat.param.addcdiv_(grad, avg, value=-group["lr"])
