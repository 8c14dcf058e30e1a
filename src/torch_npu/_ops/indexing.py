"""``torch_npu.npu_indexing(input, begin, end, strides, begin_mask=0, end_mask=0,
ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, *, out=None)``: the NPU's StridedSlice, a
new tensor (or ``out``, resized to it, as ``npu_indexing.out``) of
``input[begin[0]:end[0]:strides[0], begin[1]:end[1]:strides[1], ...]``.

op-plugin sizes the result as ``(end - begin + stride - 1) // stride`` for every dimension,
reading ``begin``/``end``/``strides`` at every dimension and ignoring the masks, so a call is
well defined only with one entry per dimension, ``0 <= begin <= end <= size`` and positive
strides, and the masks 0: that is what the emulator takes, and it refuses the rest (a zero
stride with op-plugin's message). Ascend's wav2vec2 and Bert-CRF ports call it so. No gradient:
torch_npu defines none (those ports wrap it in their own autograd Function)."""

from __future__ import annotations

from typing import Optional, Sequence

import torch

from ._no_derivative import without_derivative
from ._registry import operator

NAME = "npu_indexing"


@operator
def npu_indexing(
    input: torch.Tensor,
    begin: Sequence[int],  # noqa: A002 - torch_npu's name
    end: Sequence[int],
    strides: Sequence[int],
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    new_axis_mask: int = 0,
    shrink_axis_mask: int = 0,
    *,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    begin, end, strides = list(begin), list(end), list(strides)
    if any(s == 0 for s in strides):
        raise RuntimeError(f"{NAME}: stride should not be 0")
    if not len(begin) == len(end) == len(strides) == input.dim():
        raise NotImplementedError(
            f"{NAME}: begin, end and strides need one entry per dimension ({input.dim()}), got "
            f"{len(begin)}, {len(end)} and {len(strides)}: op-plugin sizes the result from all"
        )
    if begin_mask or end_mask or ellipsis_mask or new_axis_mask or shrink_axis_mask:
        raise NotImplementedError(
            f"{NAME}: the masks are not emulated (op-plugin sizes the "
            "result without them); pass them as 0"
        )
    for d, (b, e, s) in enumerate(zip(begin, end, strides)):
        if s < 0 or not 0 <= b <= e <= input.size(d):
            raise NotImplementedError(
                f"{NAME}: dimension {d} of size {input.size(d)}: begin {b}, end {e}, stride {s} "
                "is not emulated (0 <= begin <= end <= size and stride > 0 only)"
            )
    index = tuple(slice(b, e, s) for b, e, s in zip(begin, end, strides))
    if out is not None:
        with torch.no_grad():
            picked = input[index]
            out.resize_(picked.shape).copy_(picked)
        return out
    return without_derivative(NAME, lambda x: x[index].clone(), input)
