"""The combined-tensor helpers Ascend's apex puts on every optimizer that amp processes.

``amp.initialize`` binds them: ``get_model_combined_params/grads/grad_masks``,
``get_optimizer_combined_params/grads/grad_masks``, ``clip_model_grad_norm_fused`` and
``clip_optimizer_grad_norm_fused``, beside the flags ``optimizer.accelerate`` (combine_grad),
``combine_ddp``, ``check_combined_tensors`` (each as given, None when not, as Ascend's),
``ddp_replica_count`` and ``optimizer.is_npu_fused_optimizer``.

The buffers are amp's (see ``grad_buffers``), kept as Ascend's apex keeps them: one per kind
over all parameter groups. With fp32 master weights (O2) each list has two entries, [masters of
fp16 model parameters, fp32 model parameters] (None where there are none; the model's side holds
the fp16 model gradients first and no fp16 parameters); without (O1), the fp32 buffer. A mask is
fp32, 1 on the elements of real gradients and 0 on the padding between them. Before the first
backward pass under ``amp.scale_loss`` nothing is combined yet, and without an NpuFused
optimizer nothing combines parameters: the getters say so and return ``[]``, as Ascend's do.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import torch

from ..fused_support import fused_clip
from .grad_buffers import CombinedGrads, Kind

CombinedOf = Callable[[torch.optim.Optimizer], Optional[CombinedGrads]]


def _mask(like: torch.Tensor, segments: Sequence[Tuple[int, int]]) -> torch.Tensor:
    """1 on the gradients' elements, 0 on the padding: fp32, as Ascend's masks are, whatever
    the gradients' dtype."""
    mask = torch.zeros(like.numel(), dtype=torch.float32, device=like.device)
    for offset, n in segments:
        mask[offset : offset + n] = 1
    return mask


class CombinedHelpers:
    """The helpers of one optimizer; ``combined_of`` gives its CombinedGrads (or None)."""

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        master_weights: bool,
        combined_of: CombinedOf,
        print_fn: Callable[[str], None],
    ):
        self.optimizer = optimizer
        self.master_weights = master_weights
        self.combined_of = combined_of
        self.print = print_fn

    def _kinds(self, what: str):
        combined = self.combined_of(self.optimizer)
        if combined is None:
            self.print(
                f"To get combined {what}, please set combine_grad=True or use an npu fused "
                f"optimizer."
            )
            return None
        if not combined.units:
            self.print(f"Please get the combined {what} after the backward pass.")
            return None
        return combined.kinds

    def _ordered(self, kinds) -> List[Optional[Kind]]:
        """The kinds in the order of Ascend's lists: with master weights exactly two, [masters
        of fp16 model parameters, fp32 model parameters] (None where there are none); else the
        fp32 kinds, then any others."""
        if self.master_weights:
            fp32 = {k.from_fp16: k for k in kinds if k.dtype == torch.float32}
            return [fp32.get(True), fp32.get(False)]
        return sorted(kinds, key=lambda k: k.dtype != torch.float32)

    # --- the optimizer's side: master gradients and parameters ------------------------------

    def optimizer_grad_parts(self) -> List[Optional[fused_clip.Part]]:
        kinds = self._kinds("grads")
        if kinds is None:
            return []
        return [(k.grad, k.segments()) if k is not None else None for k in self._ordered(kinds)]

    def get_optimizer_combined_grads(self) -> List[Optional[torch.Tensor]]:
        return [part[0] if part is not None else None for part in self.optimizer_grad_parts()]

    def get_optimizer_combined_grad_masks(self) -> List[Optional[torch.Tensor]]:
        return [_mask(*part) if part is not None else None for part in self.optimizer_grad_parts()]

    def _combined_param_kinds(self):
        """The optimizer's combined parameter buffers by kind, or None (said) without a fused
        optimizer or before they exist."""
        if not getattr(self.optimizer, "is_npu_fused_optimizer", False):
            self.print("To get combined params, please use an npu fused optimizer.")
            return None
        return self._kinds("params")

    def get_optimizer_combined_params(self) -> List[Optional[torch.Tensor]]:
        kinds = self._combined_param_kinds()
        if kinds is None:
            return []
        return [k.param if k is not None else None for k in self._ordered(kinds)]

    # --- the model's side: what backward writes ----------------------------------------------

    def model_grad_parts(self) -> List[Optional[fused_clip.Part]]:
        if not self.master_weights:
            return self.optimizer_grad_parts()
        kinds = self._kinds("grads")
        if kinds is None:
            return []
        from_fp16, own = self._ordered(kinds)
        return [
            (from_fp16.model_grad, from_fp16.segments("models")) if from_fp16 is not None else None,
            (own.grad, own.segments()) if own is not None else None,
        ]

    def get_model_combined_grads(self) -> List[Optional[torch.Tensor]]:
        return [part[0] if part is not None else None for part in self.model_grad_parts()]

    def get_model_combined_grad_masks(self) -> List[Optional[torch.Tensor]]:
        return [_mask(*part) if part is not None else None for part in self.model_grad_parts()]

    def get_model_combined_params(self) -> List[Optional[torch.Tensor]]:
        if not self.master_weights:
            return self.get_optimizer_combined_params()
        kinds = self._combined_param_kinds()
        if kinds is None:
            return []
        # fp16 model parameters are not combined (None, as in Ascend's list); fp32 ones are
        # their own masters.
        _, own = self._ordered(kinds)
        return [None, own.param if own is not None else None]

    # --- clipping ------------------------------------------------------------------------------

    def clip_optimizer_grad_norm_fused(
        self, max_norm: float, norm_type: float = 2.0
    ) -> torch.Tensor:
        """Clip the optimizer's (master) gradients together; returns their total norm."""
        combined = self.combined_of(self.optimizer)
        if combined is not None and combined.units:
            parts = [part for part in self.optimizer_grad_parts() if part is not None]
            return fused_clip.clip_parts(parts, max_norm, norm_type)
        own = getattr(type(self.optimizer), "clip_optimizer_grad_norm_fused", None)
        if own is not None:  # an NpuFused optimizer clips its own buffers
            return own(self.optimizer, max_norm, norm_type)
        grads = [
            p.grad
            for group in self.optimizer.param_groups
            for p in group["params"]
            if p.grad is not None
        ]
        return fused_clip.clip_parts(fused_clip.whole(grads), max_norm, norm_type)

    def clip_model_grad_norm_fused(self, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
        """Clip the model's gradients together (O1: they are the optimizer's)."""
        if self.master_weights:
            raise RuntimeError(
                "clip_model_grad_norm_fused can only be used when opt_level='O1' "
                "(with fp32 master weights, clip the optimizer's gradients: "
                "clip_optimizer_grad_norm_fused)"
            )
        return self.clip_optimizer_grad_norm_fused(max_norm, norm_type)


HELPER_NAMES = (
    "get_model_combined_params",
    "get_model_combined_grads",
    "get_model_combined_grad_masks",
    "get_optimizer_combined_params",
    "get_optimizer_combined_grads",
    "get_optimizer_combined_grad_masks",
    "clip_model_grad_norm_fused",
    "clip_optimizer_grad_norm_fused",
)


def attach(
    optimizer: torch.optim.Optimizer,
    master_weights: bool,
    combined_of: CombinedOf,
    print_fn: Callable[[str], None],
) -> None:
    """Bind the helpers and flags onto ``optimizer`` (amp.initialize does, for every one)."""
    helpers = CombinedHelpers(optimizer, master_weights, combined_of, print_fn)
    # The options Ascend's amp leaves on the optimizer, which its scripts read: as given to
    # amp.initialize, None when not given (as there; ours acts on the validated booleans).
    from apex.amp._amp_state import _amp_state

    options = _amp_state.npu_options
    optimizer.accelerate = options.given["combine_grad"]
    optimizer.combine_ddp = options.given["combine_ddp"]
    optimizer.ddp_replica_count = options.ddp_replica_count
    optimizer.check_combined_tensors = options.given["check_combined_tensors"]
    optimizer.is_npu_fused_optimizer = is_npu_fused_optimizer(optimizer)
    for name in HELPER_NAMES:
        setattr(optimizer, name, getattr(helpers, name))


def is_npu_fused_optimizer(optimizer: torch.optim.Optimizer) -> bool:
    """Whether the optimizer says it is one of the NPU's fused optimizers (Ascend's mark)."""
    return getattr(optimizer, "is_npu_fused_optimizer", False) is True
