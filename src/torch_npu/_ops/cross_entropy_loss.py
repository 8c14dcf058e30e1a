"""``torch_npu.npu_cross_entropy_loss(input, target, weight=None, reduction='mean',
ignore_index=-100, label_smoothing=0.0, lse_square_scale_for_zloss=0.0, return_zloss=False)
-> (loss, log_prob, zloss, lse_for_zloss)``: torch's ``cross_entropy`` (class weights, ignored
label, label smoothing, 'mean'/'sum'/'none') with log_softmax and nll fused, on ``[N, C]``
logits and int64 labels, computed in fp32. ``loss`` (``[N]`` for 'none', else ``[1]``) and
``log_prob`` are stored in the input's dtype; only ``loss`` has a gradient (to ``input``).
torch_npu 2.14 documents z-loss as not yet supported: ``zloss`` and ``lse_for_zloss`` are empty
and asking for them is refused."""

from __future__ import annotations

from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from ._precision import store, upcast
from ._registry import operator


@operator
def npu_cross_entropy_loss(
    input: torch.Tensor,
    target: torch.Tensor,
    weight: Optional[torch.Tensor] = None,
    reduction: str = "mean",
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
    lse_square_scale_for_zloss: float = 0.0,
    return_zloss: bool = False,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    name = "npu_cross_entropy_loss"
    if input.dim() != 2 or input.shape[1] == 0:
        raise RuntimeError(f"{name}: input must be [N, C] with C > 0, got {tuple(input.shape)}")
    if target.dim() != 1 or target.shape[0] != input.shape[0]:
        raise RuntimeError(
            f"{name}: target must be [N] = [{input.shape[0]}], got {tuple(target.shape)}"
        )
    if target.dtype != torch.int64:
        raise RuntimeError(f"{name}: target must be int64, got {target.dtype}")
    if weight is not None and tuple(weight.shape) != (input.shape[1],):
        raise RuntimeError(
            f"{name}: weight must be [C] = [{input.shape[1]}], got {tuple(weight.shape)}"
        )
    if reduction not in ("mean", "sum", "none"):
        raise RuntimeError(f"{name}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if not 0.0 <= label_smoothing < 1.0:
        raise RuntimeError(f"{name}: label_smoothing must lie in [0, 1), got {label_smoothing}")
    if lse_square_scale_for_zloss != 0.0 or return_zloss:
        raise RuntimeError(
            f"{name}: z-loss (lse_square_scale_for_zloss, return_zloss) is not "
            "supported by torch_npu 2.14"
        )
    valid = target[target != ignore_index]
    if valid.numel() and (int(valid.min()) < 0 or int(valid.max()) >= input.shape[1]):
        raise RuntimeError(f"{name}: target values must lie in [0, {input.shape[1]})")
    log_prob = torch.log_softmax(upcast(input).float(), dim=1)
    w = None if weight is None else upcast(weight).float()
    loss = F.nll_loss(log_prob, target, weight=w, ignore_index=ignore_index, reduction="none")
    if label_smoothing > 0:
        keep = (target != ignore_index).float()
        smooth = -(log_prob * w if w is not None else log_prob).sum(dim=1) * keep
        loss = (1 - label_smoothing) * loss + label_smoothing / input.shape[1] * smooth
    if reduction == "sum":
        loss = loss.sum().reshape(1)
    elif reduction == "mean":
        if w is not None:
            count = (w[target.clamp(min=0)] * (target != ignore_index).float()).sum()
        else:
            count = (target != ignore_index).sum().float()
        loss = (loss.sum() / count).reshape(1)
    empty = input.new_empty(0)
    return (store(loss, input.dtype), store(log_prob.detach(), input.dtype), empty, empty.clone())
