"""NpuFusedBertAdam: BERT's Adam (no bias correction, decay added to the update, warmup
schedules, per-parameter gradient clipping) over combined buffers."""
from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional, Tuple

import torch
from torch.optim.optimizer import required

from .combined_params import FlatTensors
from .npu_fused_optim_base import NpuFusedOptimizerBase, check_non_negative


# The schedules of HuggingFace's pytorch-pretrained-bert (0.6): ``x`` is the progress
# step / t_total, ``warmup`` the warmup fraction (negative means none).
def warmup_cosine(x: float, warmup: float = 0.002) -> float:
    warmup = max(warmup, 0.0)
    if x < warmup:
        return x / warmup
    return 0.5 * (1.0 + math.cos(math.pi * (x - warmup) / (1.0 - warmup)))


def warmup_constant(x: float, warmup: float = 0.002) -> float:
    warmup = max(warmup, 0.0)
    if x < warmup:
        return x / warmup
    return 1.0


def warmup_linear(x: float, warmup: float = 0.002) -> float:
    warmup = max(warmup, 0.0)
    if x < warmup:
        return x / warmup
    return max((x - 1.0) / (warmup - 1.0), 0.0)


def warmup_poly(x: float, warmup: float = 0.002, degree: float = 0.5) -> float:
    """From NVIDIA's BERT example; not in HuggingFace's set (torch path only)."""
    warmup = max(warmup, 0.0)
    if x < warmup:
        return x / warmup
    return (1.0 - x) ** degree


SCHEDULES: Dict[str, Callable[[float, float], float]] = {
    "warmup_cosine": warmup_cosine,
    "warmup_constant": warmup_constant,
    "warmup_linear": warmup_linear,
    "warmup_poly": warmup_poly,
}


def scheduled_lr(group: Dict, steps_taken: int) -> float:
    """The learning rate of the step after ``steps_taken`` steps, under the group's schedule."""
    if group["t_total"] == -1:
        return group["lr"]
    return group["lr"] * SCHEDULES[group["schedule"]](steps_taken / group["t_total"],
                                                      group["warmup"])


class NpuFusedBertAdam(NpuFusedOptimizerBase):
    """BertAdam as in BERT's reference implementation."""

    STEP_KIND = "int"
    RUNTIME_KIND = "bert_adam"
    RUNTIME_STATE_NAMES = {"next_m": "exp_avg", "next_v": "exp_avg_sq"}
    RUNTIME_SCHEDULES = ("warmup_linear", "warmup_cosine", "warmup_constant")

    def __init__(self, params, lr=required, warmup=-1, t_total=-1, schedule='warmup_linear',
                 b1=0.9, b2=0.99, e=1e-6, weight_decay=0.01, max_grad_norm=-1):
        if lr is not required:
            check_non_negative("NpuFusedBertAdam", lr=lr)
        if schedule not in SCHEDULES:
            raise ValueError(f"NpuFusedBertAdam: invalid schedule {schedule!r}; "
                             f"expected one of {', '.join(sorted(SCHEDULES))}")
        if not 0.0 <= warmup < 1.0 and warmup != -1:
            raise ValueError(f"NpuFusedBertAdam: invalid warmup {warmup}: must be in [0, 1) or -1")
        for name, beta in (("b1", b1), ("b2", b2)):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"NpuFusedBertAdam: invalid {name} parameter {beta}: must be in [0, 1)")
        check_non_negative("NpuFusedBertAdam", e=e, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, schedule=schedule, warmup=warmup, t_total=t_total,
                                      b1=b1, b2=b2, e=e, weight_decay=weight_decay,
                                      max_grad_norm=max_grad_norm))

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        return [("next_m", 0.0), ("next_v", 0.0)]

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        if group["schedule"] not in self.RUNTIME_SCHEDULES:
            return None
        return dict(lr=group["lr"], warmup=group["warmup"], t_total=group["t_total"],
                    schedule=group["schedule"], b1=group["b1"], b2=group["b2"], e=group["e"],
                    weight_decay=group["weight_decay"], max_grad_norm=group["max_grad_norm"])

    def get_lr(self) -> List[float]:
        """The current scheduled learning rate of each parameter (as the reference provides)."""
        lrs = []
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                if len(state) == 0:
                    return [0.0]
                step = state["step"]
                lrs.append(scheduled_lr(group, int(step)))
        return lrs

    def _update(self, group: Dict, flat: FlatTensors) -> None:
        grad, p = flat.grad, flat.param
        if group["max_grad_norm"] > 0:
            max_norm = group["max_grad_norm"]
            for g_seg in flat.segment_views(grad):
                norm = torch.norm(g_seg.float(), 2.0)
                coef = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
                g_seg.mul_(coef.to(g_seg.dtype))
        next_m, next_v = flat.state["next_m"], flat.state["next_v"]
        next_m.mul_(group["b1"]).add_(grad, alpha=1 - group["b1"])
        next_v.mul_(group["b2"]).addcmul_(grad, grad, value=1 - group["b2"])
        update = next_m / (next_v.sqrt() + group["e"])
        if group["weight_decay"] > 0.0:
            update += group["weight_decay"] * p
        p.add_(update, alpha=-scheduled_lr(group, flat.step - 1))
