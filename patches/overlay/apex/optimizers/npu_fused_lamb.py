"""NpuFusedLamb: LAMB (You et al., "Large Batch Optimization for Deep Learning") over combined
buffers, in the form of the widely used reference implementation (no bias correction, weight
norm clamped to [0, 10])."""

from __future__ import annotations

from typing import Dict, List, Optional

import torch

from . import optimizer_kinds, step_path
from .npu_fused_optim_base import NpuFusedOptimizerBase


class NpuFusedLamb(NpuFusedOptimizerBase):
    """LAMB (``optimizer_kinds.Lamb``): an Adam step scaled per parameter by the trust ratio
    ‖w‖ / ‖adam step‖, applied in the order of Ascend's NpuFusedLamb (``_apply_step``).

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

    KIND = optimizer_kinds.LAMB
    RECORDS_NORMS = False  # Lamb keeps weight_norm, adam_norm and trust_ratio in its state

    adam_w_mode = True
    grad_averaging = True
    _max_grad_norm: Optional[float] = None

    @property
    def max_grad_norm(self) -> float:
        """Set by LAMB; else 1 with ``use_global_grad_norm``, 0 (off) without."""
        if self._max_grad_norm is not None:
            return self._max_grad_norm
        return 1.0 if self.use_global_grad_norm else 0.0

    @max_grad_norm.setter
    def max_grad_norm(self, value: float) -> None:
        self._max_grad_norm = float(value)

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        if not (self.adam_w_mode and self.grad_averaging):
            return None  # the kernel has their defaults only
        # The global-norm scaling, when on, already happened in _before_group_steps.
        options = self.KIND.runtime_options(group)
        return dict(options, adam=self.adam, use_global_grad_norm=False)

    def _before_group_steps(self) -> None:
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

    def _torch_update(self, group: Dict, flat: optimizer_kinds.FlatStep) -> None:
        lamb = optimizer_kinds.Lamb
        step = lamb.adam_step(group, flat, flat.grad, self.adam_w_mode, self.grad_averaging)
        ones = [torch.ones(())] * len(flat.segments)
        if self.adam and not self.RECORDS_NORMS:
            ratios = ones
        else:
            norms = lamb.trust_ratios(flat, step)
            if self.RECORDS_NORMS:
                for param, (weight_norm, adam_norm, ratio) in zip(flat.params, norms):
                    self._record_norms(self.state[param], weight_norm, adam_norm, ratio)
            ratios = ones if self.adam else [ratio for _, _, ratio in norms]
        self._apply_step(flat, step, ratios, group["lr"])

    @staticmethod
    def _apply_step(
        flat: optimizer_kinds.FlatStep,
        adam_step: torch.Tensor,
        ratios: List[torch.Tensor],
        lr: float,
    ) -> None:
        """``param -= lr * ratio * adam_step``, each parameter's segment with its trust ratio,
        in the operations Ascend's NpuFusedLamb uses (one ``addcmul_`` over the bucket with a
        buffer of the ratios), so that both round alike. ``adam_step`` may be overwritten."""
        ratio = torch.empty_like(flat.param)
        for seg, value in zip(flat.views(ratio), ratios):
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
