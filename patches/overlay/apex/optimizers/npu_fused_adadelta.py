"""NpuFusedAdadelta: torch.optim.Adadelta over combined buffers."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .combined_params import FlatTensors
from .npu_fused_optim_base import NpuFusedOptimizerBase, check_non_negative


class NpuFusedAdadelta(NpuFusedOptimizerBase):
    """Adadelta, as torch.optim.Adadelta."""

    STEP_KIND = "int"
    RUNTIME_KIND = "adadelta"

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0):
        check_non_negative("NpuFusedAdadelta", lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"NpuFusedAdadelta: invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay))

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        return [("square_avg", 0.0), ("acc_delta", 0.0)]

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        return dict(
            lr=group["lr"], rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"]
        )

    def _update(self, group: Dict, flat: FlatTensors) -> None:
        rho, eps = group["rho"], group["eps"]
        grad = flat.grad
        if group["weight_decay"] != 0:
            grad = grad.add(flat.param, alpha=group["weight_decay"])
        square_avg, acc_delta = flat.state["square_avg"], flat.state["acc_delta"]
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        flat.param.add_(delta, alpha=-group["lr"])
