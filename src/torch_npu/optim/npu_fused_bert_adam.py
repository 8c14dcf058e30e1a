"""``torch_npu.optim.NpuFusedBertAdam(params, lr=1e-3, warmup=-1, t_total=-1,
schedule="warmup_linear", b1=0.9, b2=0.999, e=1e-6, weight_decay=0.01, max_grad_norm=1.0)``:
BERT's Adam over combined buffers.

As torch_npu's: no bias correction, weight decay added to the update, the learning rate scaled
by the warmup schedule at progress step / t_total (``t_total=-1``: constant), and with
``max_grad_norm > 0`` each parameter group's gradients of one dtype clipped together to
``max_grad_norm`` (in place, as ``clip_grad_norm_``) before the update.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .._ops.bert_apply_adam import npu_bert_apply_adam
from . import _checks
from ._rules import SCHEDULES
from .npu_fused_optim_base import NpuFusedOptimizerBase, clip_parts

__all__ = ["NpuFusedBertAdam"]

RUNTIME_SCHEDULES = ("warmup_linear", "warmup_cosine", "warmup_constant")


def scheduled_lr(group: Dict, steps_taken: int) -> float:
    """The learning rate of the step after ``steps_taken`` steps under the group's schedule."""
    if group["t_total"] == -1:
        return group["lr"]
    return group["lr"] * SCHEDULES[group["schedule"]](
        steps_taken / group["t_total"], group["warmup"]
    )


class NpuFusedBertAdam(NpuFusedOptimizerBase):
    """BertAdam; see the module docstring."""

    RUNTIME_KIND = "bert_adam"

    def __init__(
        self,
        params,
        lr=1e-3,
        warmup=-1,
        t_total=-1,
        schedule="warmup_linear",
        b1=0.9,
        b2=0.999,
        e=1e-6,
        weight_decay=0.01,
        max_grad_norm=1.0,
    ):
        _checks.non_negative("NpuFusedBertAdam", lr=lr, e=e)
        if (warmup < 0.0 and warmup != -1) or warmup >= 1.0:
            raise ValueError(f"NpuFusedBertAdam: invalid warmup: {warmup}")
        if schedule not in SCHEDULES:
            raise ValueError(f"NpuFusedBertAdam: invalid schedule parameter: {schedule}")
        for name, beta in (("b1", b1), ("b2", b2)):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"NpuFusedBertAdam: invalid {name} parameter: {beta}")
        self.max_grad_norm = max_grad_norm
        super().__init__(
            params,
            dict(
                lr=lr,
                schedule=schedule,
                warmup=warmup,
                t_total=t_total,
                b1=b1,
                b2=b2,
                e=e,
                weight_decay=weight_decay,
                max_grad_norm=max_grad_norm,
            ),
        )

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        return [("exp_avg", 0.0), ("exp_avg_sq", 0.0)]

    def _before_group_steps(self) -> None:
        for b in self._buckets:
            max_norm = self.param_groups[b.group_index]["max_grad_norm"]
            if max_norm > 0:
                clip_parts([(b.grad, b.segments)], float(max_norm), 2.0)

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        if group["schedule"] not in RUNTIME_SCHEDULES:
            return None  # warmup_poly: torch operations
        return dict(
            lr=group["lr"],
            warmup=group["warmup"],
            t_total=group["t_total"],
            schedule=group["schedule"],
            b1=group["b1"],
            b2=group["b2"],
            e=group["e"],
            weight_decay=group["weight_decay"],
            max_grad_norm=-1.0,
        )  # clipped before

    def _torch_update(self, group: Dict, work) -> Dict:
        # torch_npu's own ApplyAdamV2 operator (max_grad_norm -1: the gradients are clipped).
        npu_bert_apply_adam(
            scheduled_lr(group, work.step - 1),
            group["b1"],
            group["b2"],
            group["e"],
            work.grad,
            -1.0,
            0.0,
            group["weight_decay"],
            out=(work.param, work.state["exp_avg"], work.state["exp_avg_sq"]),
        )
        return {}

    def get_lr(self) -> List[float]:
        """The learning rate each parameter's next step uses (``[0.0]`` before any step)."""
        lrs = []
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                if not state:
                    return [0.0]
                lrs.append(scheduled_lr(group, int(state["step"])))
        return lrs
