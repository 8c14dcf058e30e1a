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
from typing import Dict, List


from . import optimizer_kinds, step_path
from .npu_fused_optim_base import NpuFusedOptimizerBase

# Moment names of HuggingFace's BertAdam -> Ascend's (and this class's).
LEGACY_STATE_NAMES = {"next_m": "exp_avg", "next_v": "exp_avg_sq"}
scheduled_lr = optimizer_kinds.BertAdam.scheduled_lr
# The warmup schedules by name, as Ascend's module has them: published BERT code subclassing this
# class reads ``npu_fused_bert_adam.SCHEDULES[group["schedule"]](step / t_total, warmup)``.
SCHEDULES = optimizer_kinds.SCHEDULES


class NpuFusedBertAdam(NpuFusedOptimizerBase):
    """BertAdam as in Ascend's apex; see the module docstring."""

    KIND = optimizer_kinds.BERT_ADAM

    def _before_group_steps(self) -> None:
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
