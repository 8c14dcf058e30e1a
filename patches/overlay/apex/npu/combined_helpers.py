"""The combined-tensor helpers Ascend's apex puts on every optimizer that amp processes.

``amp.initialize`` binds them: ``get_model_combined_params/grads/grad_masks``,
``get_optimizer_combined_params/grads/grad_masks``, ``clip_model_grad_norm_fused`` and
``clip_optimizer_grad_norm_fused``, beside the flags ``optimizer.accelerate`` (combine_grad) and
``optimizer.is_npu_fused_optimizer``.

The buffers are amp's (see ``combined_grads``): one per parameter group and dtype of an NpuFused
optimizer, else one per dtype, holding master and fp32 model gradients alike; with fp32 master
weights the fp16 model gradients sit in an fp16 buffer of the same layout. (Ascend keeps the
gradients of fp16 and of fp32 model parameters in separate buffers; the lists here hold our
buffers, each with its mask, so norms and scalings over them mean the same.) A mask is 1 on the
elements of real gradients and 0 on the padding between them. Before the first backward pass
under ``amp.scale_loss`` nothing is combined yet: the getters say so and return ``[]``, as
Ascend's do.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import torch

from . import fused_clip
from .combined_grads import CombinedGrads

CombinedOf = Callable[[torch.optim.Optimizer], Optional[CombinedGrads]]


def _mask(like: torch.Tensor, segments: Sequence[Tuple[int, int]]) -> torch.Tensor:
    mask = torch.zeros(like.numel(), dtype=like.dtype, device=like.device)
    for offset, n in segments:
        mask[offset:offset + n] = 1
    return mask


class CombinedHelpers:
    """The helpers of one optimizer; ``combined_of`` gives its CombinedGrads (or None)."""

    def __init__(self, optimizer: torch.optim.Optimizer, master_weights: bool,
                 combined_of: CombinedOf, print_fn: Callable[[str], None]):
        self.optimizer = optimizer
        self.master_weights = master_weights
        self.combined_of = combined_of
        self.print = print_fn

    def _units(self, what: str):
        combined = self.combined_of(self.optimizer)
        if combined is None:
            self.print(f"To get combined {what}, please set combine_grad=True or use an npu fused "
                       f"optimizer.")
            return None
        if not combined.units:
            self.print(f"Please get the combined {what} after the backward pass.")
            return None
        return combined.units

    # --- the optimizer's side: master gradients and parameters ------------------------------

    def optimizer_grad_parts(self) -> List[fused_clip.Part]:
        units = self._units("grads") or []
        return [(unit.grad, unit.segments()) for unit in units]

    def get_optimizer_combined_grads(self) -> List[torch.Tensor]:
        return [buf for buf, _ in self.optimizer_grad_parts()]

    def get_optimizer_combined_grad_masks(self) -> List[torch.Tensor]:
        return [_mask(buf, segments) for buf, segments in self.optimizer_grad_parts()]

    def get_optimizer_combined_params(self) -> List[torch.Tensor]:
        if not getattr(self.optimizer, "is_npu_fused_optimizer", False):
            self.print("To get combined params, please use an npu fused optimizer.")
            return []
        return [unit.param_buffer for unit in self._units("params") or []]

    # --- the model's side: what backward writes ----------------------------------------------

    def model_grad_parts(self) -> List[fused_clip.Part]:
        if not self.master_weights:
            return self.optimizer_grad_parts()
        parts = []
        for unit in self._units("grads") or []:
            if unit.model_grad is not None:
                parts.append((unit.model_grad, unit.segments("models")))
            own = unit.segments("own")
            if own:
                parts.append((unit.grad, own))
        return parts

    def get_model_combined_grads(self) -> List[torch.Tensor]:
        return [buf for buf, _ in self.model_grad_parts()]

    def get_model_combined_grad_masks(self) -> List[torch.Tensor]:
        return [_mask(buf, segments) for buf, segments in self.model_grad_parts()]

    def get_model_combined_params(self) -> List[Optional[torch.Tensor]]:
        if not self.master_weights:
            return self.get_optimizer_combined_params()
        # fp16 model parameters are not combined (None, as in Ascend's list); fp32 ones share
        # the buffers of their masters.
        own = [unit.param_buffer for unit in self._units("params") or []
               if unit.param_buffer is not None and unit.segments("own")]
        return [None] + own

    # --- clipping ------------------------------------------------------------------------------

    def clip_optimizer_grad_norm_fused(self, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
        """Clip the optimizer's (master) gradients together; returns their total norm."""
        combined = self.combined_of(self.optimizer)
        if combined is not None and combined.units:
            return fused_clip.clip_parts(self.optimizer_grad_parts(), max_norm, norm_type)
        own = getattr(type(self.optimizer), "clip_optimizer_grad_norm_fused", None)
        if own is not None:  # an NpuFused optimizer clips its own buffers
            return own(self.optimizer, max_norm, norm_type)
        grads = [p.grad for group in self.optimizer.param_groups for p in group["params"]
                 if p.grad is not None]
        return fused_clip.clip_parts(fused_clip.whole(grads), max_norm, norm_type)

    def clip_model_grad_norm_fused(self, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
        """Clip the model's gradients together (O1: they are the optimizer's)."""
        if self.master_weights:
            raise RuntimeError("clip_model_grad_norm_fused can only be used when opt_level='O1' "
                               "(with fp32 master weights, clip the optimizer's gradients: "
                               "clip_optimizer_grad_norm_fused)")
        return self.clip_optimizer_grad_norm_fused(max_norm, norm_type)


HELPER_NAMES = ("get_model_combined_params", "get_model_combined_grads",
                "get_model_combined_grad_masks", "get_optimizer_combined_params",
                "get_optimizer_combined_grads", "get_optimizer_combined_grad_masks",
                "clip_model_grad_norm_fused", "clip_optimizer_grad_norm_fused")


def attach(optimizer: torch.optim.Optimizer, combine_grad: bool, master_weights: bool,
           combined_of: CombinedOf, print_fn: Callable[[str], None]) -> None:
    """Bind the helpers and flags onto ``optimizer`` (amp.initialize does, for every one)."""
    helpers = CombinedHelpers(optimizer, master_weights, combined_of, print_fn)
    optimizer.accelerate = bool(combine_grad)
    optimizer.is_npu_fused_optimizer = is_npu_fused_optimizer(optimizer)
    for name in HELPER_NAMES:
        setattr(optimizer, name, getattr(helpers, name))


def is_npu_fused_optimizer(optimizer: torch.optim.Optimizer) -> bool:
    """Whether the optimizer says it is one of the NPU's fused optimizers (Ascend's mark)."""
    return getattr(optimizer, "is_npu_fused_optimizer", False) is True
