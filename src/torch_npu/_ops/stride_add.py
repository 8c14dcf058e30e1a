"""``torch_npu.npu_stride_add(input, other, offset1, offset2, c1_len)``: the sum of two 5-D
(NC1HWC0) tensors from channel-block offsets ``offset1`` and ``offset2`` on, each zero-padded
along the second dimension to ``16 * c1_len``, as torch_npu's own test and documented example
compute it (``[[[[[1.]]]]]`` with itself gives 2 followed by fifteen zeros). Computed in fp32,
stored once; no backward."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator


@operator
def npu_stride_add(
    input: torch.Tensor, other: torch.Tensor, offset1: int, offset2: int, c1_len: int
) -> torch.Tensor:
    name = "npu_stride_add"
    x1, x2 = input, other
    if (
        x1.dim() != 5
        or x2.dim() != 5
        or x1.shape[0] != x2.shape[0]
        or x1.shape[2:] != x2.shape[2:]
        or x1.dtype != x2.dtype
    ):
        raise RuntimeError(
            f"{name}: x1 and x2 must be 5-D of one dtype, alike but for the "
            f"second dimension, got {tuple(x1.shape)} and {tuple(x2.shape)}"
        )
    width = 16 * int(c1_len)
    parts = []
    for what, x, offset in (("x1", x1, int(offset1)), ("x2", x2, int(offset2))):
        if not 0 <= offset <= x.shape[1] or x.shape[1] - offset > width:
            raise RuntimeError(
                f"{name}: {what}'s {x.shape[1] - offset} blocks from offset "
                f"{offset} must fit 16 * c1_len = {width}"
            )
        parts.append((x, offset))

    def compute(a, b):
        padded = [
            F.pad(upcast(t).float()[:, off:], (0, 0) * 3 + (0, width - (t.shape[1] - off)))
            for t, (_, off) in zip((a, b), parts)
        ]
        return store(padded[0] + padded[1], x1.dtype)

    return without_derivative(name, compute, x1, x2)
