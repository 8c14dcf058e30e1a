"""``torch_npu.npu_pad(input, paddings)``: zeros around ``input``, ``paddings`` read as
(before, after) pairs from the first dimension on, as the NPU's Pad reads them (missing ones
are 0, extra ones ignored; ``torch.nn.functional.pad`` starts from the last dimension).
torch_npu defines no gradient for it: a backward through it raises, as on the NPU."""
from __future__ import annotations

from typing import List, Sequence

import torch
import torch.nn.functional as F


def _torch_order(paddings: Sequence[int], dims: int) -> List[int]:
    pairs = (list(paddings) + [0] * (2 * dims))[:2 * dims]
    if any(p < 0 for p in pairs):
        raise RuntimeError(f"npu_pad: paddings must be >= 0, got {list(paddings)}")
    order: List[int] = []
    for d in reversed(range(dims)):
        order += pairs[2 * d:2 * d + 2]
    return order


class _Pad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, order):  # noqa: A002,D102 - torch.autograd.Function protocol
        return F.pad(input, order)

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        raise RuntimeError("the derivative for 'npu_pad' is not implemented")


def npu_pad(input: torch.Tensor, paddings: Sequence[int]) -> torch.Tensor:  # noqa: A002
    return _Pad.apply(input, _torch_order(paddings, input.dim()))
