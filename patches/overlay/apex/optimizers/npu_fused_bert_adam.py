"""NpuFusedBertAdam: BERT's Adam (no bias correction, decay added to the update, warmup
schedules) over combined buffers, with Ascend's apex's state layout and clipping.

As in Ascend's apex (whose checkpoints and results users have): the moments are ``exp_avg`` and
``exp_avg_sq``, and with ``max_grad_norm > 0`` every gradient of the optimizer is divided by
their global L2 norm when that norm exceeds 1 (HuggingFace's BertAdam clips each parameter to
``max_grad_norm`` instead, and names the moments ``next_m``/``next_v``). A checkpoint in
HuggingFace's names, as this class wrote them before, loads with the moments renamed.
"""

from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional, Tuple

from torch.optim.optimizer import required

from . import step_path
from .combined_params import FlatTensors
from .npu_fused_optim_base import NpuFusedOptimizerBase, check_non_negative

# Moment names of HuggingFace's BertAdam -> Ascend's (and this class's).
LEGACY_STATE_NAMES = {"next_m": "exp_avg", "next_v": "exp_avg_sq"}


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
    return group["lr"] * SCHEDULES[group["schedule"]](
        steps_taken / group["t_total"], group["warmup"]
    )


class NpuFusedBertAdam(NpuFusedOptimizerBase):
    """BertAdam as in Ascend's apex; see the module docstring."""

    STEP_KIND = "int"
    RUNTIME_KIND = "bert_adam"
    RUNTIME_SCHEDULES = ("warmup_linear", "warmup_cosine", "warmup_constant")

    def __init__(
        self,
        params,
        lr=required,
        warmup=-1,
        t_total=-1,
        schedule="warmup_linear",
        b1=0.9,
        b2=0.99,
        e=1e-6,
        weight_decay=0.01,
        max_grad_norm=-1,
    ):
        if lr is not required:
            check_non_negative("NpuFusedBertAdam", lr=lr)
        if schedule not in SCHEDULES:
            raise ValueError(
                f"NpuFusedBertAdam: invalid schedule {schedule!r}; "
                f"expected one of {', '.join(sorted(SCHEDULES))}"
            )
        if not 0.0 <= warmup < 1.0 and warmup != -1:
            raise ValueError(f"NpuFusedBertAdam: invalid warmup {warmup}: must be in [0, 1) or -1")
        for name, beta in (("b1", b1), ("b2", b2)):
            if not 0.0 <= beta < 1.0:
                raise ValueError(
                    f"NpuFusedBertAdam: invalid {name} parameter {beta}: must be in [0, 1)"
                )
        check_non_negative("NpuFusedBertAdam", e=e, weight_decay=weight_decay)
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

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        if group["schedule"] not in self.RUNTIME_SCHEDULES:
            return None
        # The global-norm division, when on, already happened in _before_group_updates.
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
        )

    def _before_group_updates(self) -> None:
        """Divide the gradients of groups with ``max_grad_norm > 0`` by the global norm of all
        the optimizer's gradients, when it is finite and above 1."""
        clipped = [i for i, group in enumerate(self.param_groups) if group["max_grad_norm"] > 0]
        grads = self._grads_for_norm() if clipped else []
        if not grads:
            return
        global_norm = float(step_path.total_norm(grads, 2.0))
        if not (math.isfinite(global_norm) and global_norm > 1.0):
            return
        for g in self._grads_for_norm(clipped):
            g.div_(global_norm)

    def get_global_grad_norm(self) -> float:
        """The L2 norm of all the optimizer's gradients, as a float, also kept in
        ``self.global_grad_norm`` (Ascend's NpuFusedBertAdam has this method)."""
        grads = self._grads_for_norm()
        self.global_grad_norm = float(step_path.total_norm(grads, 2.0)) if grads else 0.0
        return self.global_grad_norm

    def load_state_dict(self, state_dict: Dict) -> None:
        """Loads Ascend's layout (``exp_avg``/``exp_avg_sq``) and HuggingFace's names
        (``next_m``/``next_v``), renamed; a state holding both is refused."""
        renamed = dict(state_dict)
        renamed["state"] = {
            key: self._renamed_state(key, value) for key, value in state_dict["state"].items()
        }
        super().load_state_dict(renamed)

    @staticmethod
    def _renamed_state(key, param_state: Dict) -> Dict:
        out = dict(param_state)
        for old, new in LEGACY_STATE_NAMES.items():
            if old not in out:
                continue
            if new in out:
                raise ValueError(
                    f"NpuFusedBertAdam.load_state_dict: the state of parameter {key} "
                    f"holds both {old!r} and {new!r}; which moment to keep is "
                    f"ambiguous"
                )
            out[new] = out.pop(old)
        return out

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
        exp_avg, exp_avg_sq = flat.state["exp_avg"], flat.state["exp_avg_sq"]
        exp_avg.mul_(group["b1"]).add_(grad, alpha=1 - group["b1"])
        exp_avg_sq.mul_(group["b2"]).addcmul_(grad, grad, value=1 - group["b2"])
        update = exp_avg / (exp_avg_sq.sqrt() + group["e"])
        if group["weight_decay"] > 0.0:
            update += group["weight_decay"] * p
        # The product first, then the subtraction (two roundings), as Ascend's apex computes it:
        # a fused add with alpha rounds once and can differ in the last bit.
        p.sub_(update.mul_(scheduled_lr(group, flat.step - 1)))
