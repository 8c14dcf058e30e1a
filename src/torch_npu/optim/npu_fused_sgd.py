"""``torch_npu.optim.NpuFusedSGD(params, lr, momentum=0, dampening=0, weight_decay=0,
nesterov=False)``: torch.optim.SGD over combined buffers."""

from __future__ import annotations

from typing import Dict

import torch

from . import _optimizer_kinds as optimizer_kinds
from .npu_fused_optim_base import NpuFusedOptimizerBase

__all__ = ["NpuFusedSGD"]


class NpuFusedSGD(NpuFusedOptimizerBase):
    """SGD with momentum, dampening, Nesterov momentum and weight decay, as torch.optim.SGD."""

    KIND = optimizer_kinds.SGD
    INIT_STATE_ARGS = ("weight_decay",)

    def __setstate__(self, state: Dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)

    def _init_param_state(self, p: torch.Tensor, *args, **kwargs) -> None:
        """As torch_npu's: the momentum buffer starts as the (weight-decayed) gradient, as
        torch's first step makes it; an existing one is copied into a new tensor. A buffer made
        here before any step is made again by that step (from the same gradient), so that the
        step is still the first."""
        options = self._options_of(p, args, kwargs)
        state = self.state[p]
        if "momentum_buffer" in state:
            fresh = torch.zeros_like(p.grad)
            fresh.copy_(state["momentum_buffer"])
            state["momentum_buffer"] = fresh
            return
        d_p = p.grad
        if options["weight_decay"] != 0:
            d_p = d_p.add(p, alpha=options["weight_decay"])
        state["momentum_buffer"] = torch.clone(d_p).detach()
        self.__dict__.setdefault("_unstepped_buffers", set()).add(id(p))

    def _maybe_init_combined_params_and_grads(self) -> None:
        unstepped = self.__dict__.pop("_unstepped_buffers", set())
        for group in self.param_groups:
            for p in group["params"]:
                if id(p) in unstepped:
                    self.state[p].pop("momentum_buffer", None)
        super()._maybe_init_combined_params_and_grads()

    def _runtime_step(self, rt, options, b) -> None:
        if options["momentum"] != 0 and "momentum_buffer" not in b.state:
            b.combine_state(self.state, "momentum_buffer", 0.0)  # the kernel's first step fills it
        super()._runtime_step(rt, options, b)
