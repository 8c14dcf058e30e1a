"""``torch_npu.batch_norm_reduce(input, eps) -> (sum, square_sum)``: BatchNorm's statistics
reduction of an ``(N, C, H, W)`` input, per channel the sum and the sum of squares of its
elements, fp32 ``(C,)``, accumulated in fp32 (``eps`` is reserved: torch_npu documents that it
takes no part). torch_npu registers no backward: torch's autograd fallback
decides (see _no_derivative)."""

from __future__ import annotations

from typing import Tuple

import torch

from ._no_derivative import without_derivative
from ._precision import upcast
from ._registry import operator


@operator
def batch_norm_reduce(input: torch.Tensor, eps: float) -> Tuple[torch.Tensor, torch.Tensor]:
    if input.dim() != 4:
        raise RuntimeError(
            f"batch_norm_reduce: input must be 4-D (N, C, H, W), got shape {tuple(input.shape)}"
        )

    def compute(x):
        v = upcast(x).float()
        return v.sum(dim=(0, 2, 3)), v.pow(2).sum(dim=(0, 2, 3))

    return without_derivative("batch_norm_reduce", compute, input)
