"""``torch_npu.npu_masked_fill_range(input, start, end, value, axis=-1)``: a copy of ``input``
(1-D ``(D,)``, 2-D ``(N, D)`` or 3-D) where, for each of the ``num`` ranges and each row ``n``,
the elements ``start[i, n] <= d < end[i, n]`` of the last axis get ``value[i]`` (ranges
applied in order, later ones winning), as torch_npu's example shows: ``start``/``end`` int32
``(num, N)``, ``value`` ``(num,)`` of the input's dtype. Rows are the first axis (a 1-D input is
one row); the fill runs along the last axis, the only one torch_npu's example uses. The values
are copied, not computed; torch_npu registers no backward."""

from __future__ import annotations

import torch

from ._no_derivative import without_derivative
from ._registry import operator


@operator
def npu_masked_fill_range(
    input: torch.Tensor, start: torch.Tensor, end: torch.Tensor, value: torch.Tensor, axis: int = -1
) -> torch.Tensor:
    name = "npu_masked_fill_range"
    if not 1 <= input.dim() <= 3:
        raise RuntimeError(f"{name}: input must be 1-D, 2-D or 3-D, got {input.dim()}-D")
    if axis % input.dim() != input.dim() - 1:
        raise RuntimeError(f"{name}: only the last axis is supported, got axis {axis}")
    rows = 1 if input.dim() == 1 else input.shape[0]
    if start.dim() != 2 or start.shape != end.shape or start.shape[1] > rows:
        raise RuntimeError(
            f"{name}: start {tuple(start.shape)} and end {tuple(end.shape)} must "
            f"be (num, N) with N <= {rows} rows"
        )
    if start.dtype != torch.int32 or end.dtype != torch.int32:
        raise RuntimeError(f"{name}: start and end must be int32, got {start.dtype}, {end.dtype}")
    if value.dim() != 1 or value.shape[0] != start.shape[0]:
        raise RuntimeError(
            f"{name}: value must be (num,) = ({start.shape[0]},), got {tuple(value.shape)}"
        )
    if value.dtype != input.dtype:
        raise RuntimeError(f"{name}: value ({value.dtype}) must have input's dtype ({input.dtype})")
    ranges = list(zip(start.cpu().tolist(), end.cpu().tolist()))

    def compute(x, value):
        out = x.clone()
        lines = out.unsqueeze(0) if out.dim() == 1 else out
        for i, (begins, ends) in enumerate(ranges):
            for n, (b, e) in enumerate(zip(begins, ends)):
                lines[n][..., max(b, 0) : max(e, 0)] = value[i]
        return out

    return without_derivative(name, compute, input, value)
