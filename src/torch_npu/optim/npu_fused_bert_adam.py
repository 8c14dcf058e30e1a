"""``torch_npu.optim.NpuFusedBertAdam(params, lr=1e-3, warmup=-1, t_total=-1,
schedule="warmup_linear", b1=0.9, b2=0.999, e=1e-6, weight_decay=0.01, max_grad_norm=1.0)``:
BERT's Adam over combined buffers.

As torch_npu's: no bias correction, weight decay added to the update, the learning rate scaled
by the warmup schedule at progress step / t_total (``t_total=-1``: constant), and with
``max_grad_norm > 0`` each parameter group's gradients of one dtype clipped together to
``max_grad_norm`` (in place, as ``clip_grad_norm_``) before the update.
"""

from __future__ import annotations

from typing import Dict, List

from .._ops.bert_apply_adam import npu_bert_apply_adam
from . import _optimizer_kinds as optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase, clip_parts

__all__ = ["NpuFusedBertAdam"]

scheduled_lr = optimizer_kinds.BertAdam.scheduled_lr
# The warmup schedules by name, as torch_npu's module has them (a subclass's step reads them).
SCHEDULES = optimizer_kinds.SCHEDULES


class NpuFusedBertAdam(NpuFusedOptimizerBase):
    """BertAdam; see the module docstring."""

    KIND = optimizer_kinds.BERT_ADAM

    @property
    def max_grad_norm(self) -> float:
        """The constructor's ``max_grad_norm`` (each group's own is in the group)."""
        return self.defaults["max_grad_norm"]

    def _before_group_steps(self) -> None:
        for b in self._buckets:
            max_norm = self.param_groups[b.group_index]["max_grad_norm"]
            if max_norm > 0:
                clip_parts([(b.grad, b.segments)], float(max_norm), 2.0)

    def _torch_update(self, group: Dict, flat: optimizer_kinds.FlatStep) -> None:
        # torch_npu's own ApplyAdamV2 operator (max_grad_norm -1: the gradients are clipped).
        npu_bert_apply_adam(
            scheduled_lr(group, flat.step - 1),
            group["b1"],
            group["b2"],
            group["e"],
            flat.grad,
            -1.0,
            0.0,
            group["weight_decay"],
            out=(flat.param, flat.state["exp_avg"], flat.state["exp_avg_sq"]),
        )

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
