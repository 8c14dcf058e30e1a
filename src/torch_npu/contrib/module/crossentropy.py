"""``torch_npu.contrib.module.LabelSmoothingCrossEntropy(num_classes=1000, smooth_factor=0.)``:
cross entropy against smoothed one-hot labels (Szegedy et al., "Rethinking the Inception
Architecture"), as Ascend's image-classification ports use it. The class of each row gets
``1 - smooth_factor``, every other class ``smooth_factor / (num_classes - 1)``; the loss of a
row is ``-sum(label * log_softmax(pred))`` and the result is the mean over the batch, in fp32.
Built on the NPU operators ``npu_one_hot`` (targets read as int32, as torch_npu casts them) and
``npu_softmax_cross_entropy_with_logits``, so the gradient is theirs."""

from __future__ import annotations

import torch
from torch import nn

from ..._ops.one_hot import npu_one_hot
from ..._ops.softmax_cross_entropy import npu_softmax_cross_entropy_with_logits

__all__ = ["LabelSmoothingCrossEntropy"]


class LabelSmoothingCrossEntropy(nn.Module):
    """``forward(pred, target)``: ``pred`` (batch, classes) logits, ``target`` (batch,) class
    indices (any dtype; read as int32); returns the 0-dim fp32 mean loss."""

    def __init__(self, num_classes: int = 1000, smooth_factor: float = 0.0) -> None:
        super().__init__()
        if num_classes < 2:
            raise ValueError(
                f"LabelSmoothingCrossEntropy: num_classes must be at least 2, got {num_classes}"
            )
        self.on_value = 1.0 - smooth_factor
        self.off_value = smooth_factor / (num_classes - 1)

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if pred.dim() != 2:
            raise RuntimeError(
                "LabelSmoothingCrossEntropy: pred must be (batch, classes), got shape "
                f"{tuple(pred.shape)}"
            )
        labels = npu_one_hot(
            target.to(torch.int32), -1, pred.size(1), self.on_value, self.off_value
        ).to(pred.dtype)
        per_row = npu_softmax_cross_entropy_with_logits(pred, labels)
        return torch.mean(per_row, [0], keepdim=False, dtype=torch.float32)
