"""``torch_npu.optim.NpuFusedSGD(params, lr, momentum=0, dampening=0, weight_decay=0,
nesterov=False)``: torch.optim.SGD over combined buffers."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import torch
from torch.optim.optimizer import required

from . import _checks, _rules
from .npu_fused_optim_base import NpuFusedOptimizerBase

__all__ = ["NpuFusedSGD"]


class NpuFusedSGD(NpuFusedOptimizerBase):
    """SGD with momentum, dampening, Nesterov momentum and weight decay, as torch.optim.SGD."""

    RUNTIME_KIND = "sgd"
    STEP_IN_STATE = False
    INIT_STATE_ARGS = ("weight_decay",)

    def __init__(
        self, params, lr=required, momentum=0, dampening=0, weight_decay=0, nesterov=False
    ):
        if lr is required:
            raise ValueError("NpuFusedSGD: lr is required")
        _checks.non_negative("NpuFusedSGD", lr=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(
                "NpuFusedSGD: Nesterov momentum requires a momentum and zero dampening"
            )
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
            ),
        )

    def __setstate__(self, state: Dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)

    def _state_spec(self, group: Dict) -> List[Tuple[str, Optional[float]]]:
        # torch makes the momentum buffer at the first step (a copy of the gradient).
        return [("momentum_buffer", None)] if group["momentum"] != 0 else []

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        return dict(
            lr=group["lr"],
            momentum=group["momentum"],
            dampening=group["dampening"],
            weight_decay=group["weight_decay"],
            nesterov=group["nesterov"],
        )

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

    def _torch_update(self, group: Dict, work) -> Dict[str, torch.Tensor]:
        return _rules.torch_optim_step(torch.optim.SGD, group, work, step_in_state=False)
