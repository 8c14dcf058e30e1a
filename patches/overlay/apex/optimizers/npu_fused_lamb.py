"""NpuFusedLamb: LAMB (You et al., "Large Batch Optimization for Deep Learning") over combined
buffers, in the form of the widely used reference implementation (no bias correction, weight
norm clamped to [0, 10])."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import torch

from . import step_path
from .combined_params import FlatTensors
from .npu_fused_optim_base import NpuFusedOptimizerBase, check_betas, check_non_negative

WEIGHT_NORM_CLAMP = 10.0


class NpuFusedLamb(NpuFusedOptimizerBase):
    """LAMB: an Adam step scaled per parameter by the trust ratio ‖w‖ / ‖adam step‖.

    ``adam=True`` turns the trust ratio off (plain Adam without bias correction).
    ``use_global_grad_norm=True`` first scales all gradients of the optimizer by
    ``1 / max(global_norm, 1)``, the global L2 gradient norm clipped to 1 (as NVIDIA's LAMB does
    with its default ``max_grad_norm=1``).

    Lamb and LAMB set three more things (always the defaults here; the runtime kernel has only
    them): ``max_grad_norm`` (the clipping threshold of that global norm; 0 turns it off),
    ``adam_w_mode`` (True: weight decay added to the Adam step, decoupled; False: to the
    gradient, L2) and ``grad_averaging`` (True: the first moment takes ``1 - beta1`` of the
    gradient; False: all of it).
    """

    STEP_KIND = "int"
    RUNTIME_KIND = "lamb"
    RECORDS_NORMS = False  # Lamb keeps weight_norm, adam_norm and trust_ratio in its state

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-6,
        weight_decay=0,
        adam=False,
        use_global_grad_norm=False,
    ):
        name = type(self).__name__
        check_non_negative(name, lr=lr, eps=eps, weight_decay=weight_decay)
        check_betas(name, betas)
        self.adam = adam
        self.use_global_grad_norm = use_global_grad_norm
        self.max_grad_norm = 1.0 if use_global_grad_norm else 0.0
        self.adam_w_mode = True
        self.grad_averaging = True
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        return [("exp_avg", 0.0), ("exp_avg_sq", 0.0)]

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        if not (self.adam_w_mode and self.grad_averaging):
            return None  # the kernel has their defaults only
        beta1, beta2 = group["betas"]
        # The global-norm scaling, when on, already happened in _before_group_updates.
        return dict(
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            adam=self.adam,
            use_global_grad_norm=False,
        )

    def _before_group_updates(self) -> None:
        if self.max_grad_norm <= 0:
            return
        grads = self._grads_for_norm()
        if not grads:
            return
        global_norm = step_path.total_norm(grads, 2.0)
        max_norm = self.max_grad_norm
        scale = max_norm / torch.clamp(global_norm, min=max_norm)
        for g in grads:
            g.mul_(scale.to(g.dtype))

    def _update(self, group: Dict, flat: FlatTensors) -> None:
        beta1, beta2 = group["betas"]
        grad, p = flat.grad, flat.param
        exp_avg, exp_avg_sq = flat.state["exp_avg"], flat.state["exp_avg_sq"]
        decoupled = self.adam_w_mode
        if group["weight_decay"] != 0 and not decoupled:
            grad = grad.add(p, alpha=group["weight_decay"])
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1 if self.grad_averaging else 1.0)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        adam_step = exp_avg / exp_avg_sq.sqrt().add(group["eps"])
        if group["weight_decay"] != 0 and decoupled:
            adam_step.add_(p, alpha=group["weight_decay"])
        if self.adam and not self.RECORDS_NORMS:
            ratios = [torch.ones(())] * len(flat.segments)
        else:
            ratios = []
            for param, p_seg, step_seg in zip(
                flat.params, flat.segment_views(p), flat.segment_views(adam_step)
            ):
                weight_norm = p_seg.float().pow(2).sum().sqrt().clamp(0, WEIGHT_NORM_CLAMP)
                adam_norm = step_seg.float().pow(2).sum().sqrt()
                if weight_norm == 0 or adam_norm == 0:
                    trust_ratio = torch.ones(())
                else:
                    trust_ratio = weight_norm / adam_norm
                if self.RECORDS_NORMS:
                    self._record_norms(self.state[param], weight_norm, adam_norm, trust_ratio)
                ratios.append(torch.ones(()) if self.adam else trust_ratio)
        self._apply_step(flat, adam_step, ratios, group["lr"])

    @staticmethod
    def _apply_step(
        flat: FlatTensors, adam_step: torch.Tensor, ratios: List[torch.Tensor], lr: float
    ) -> None:
        """``param -= lr * ratio * adam_step``, each parameter's segment with its trust ratio,
        in the operations Ascend's NpuFusedLamb uses (one ``addcmul_`` over the bucket with a
        buffer of the ratios), so that both round alike. ``adam_step`` may be overwritten."""
        ratio = torch.empty_like(flat.param)
        for seg, value in zip(flat.segment_views(ratio), ratios):
            seg.fill_(value.item())
        flat.param.addcmul_(adam_step, ratio, value=-lr)

    @staticmethod
    def _record_norms(
        state: Dict, weight_norm: torch.Tensor, adam_norm: torch.Tensor, trust_ratio: torch.Tensor
    ) -> None:
        """Lamb's per-parameter state beside the moments, as the reference keeps it."""
        state["weight_norm"] = weight_norm
        state["adam_norm"] = adam_norm
        state["trust_ratio"] = trust_ratio
