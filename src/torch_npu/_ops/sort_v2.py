"""``torch_npu.npu_sort_v2(input, dim=-1, descending=False, *, out=None)``: the values of
``input`` sorted along its last dimension (torch_npu documents only ``dim=-1``), without
indices; into ``out`` when given. torch_npu registers no backward: a backward through it
raises."""

from __future__ import annotations

from typing import Optional

import torch

from ._no_derivative import without_derivative
from ._registry import operator


@operator
def npu_sort_v2(
    input: torch.Tensor,
    dim: int = -1,
    descending: bool = False,
    *,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    if input.dim() and dim % input.dim() != input.dim() - 1:
        raise RuntimeError(
            f"npu_sort_v2: only the last dimension (dim=-1) is supported, got dim {dim}"
        )
    values = without_derivative(
        "npu_sort_v2", lambda x: torch.sort(x, dim=-1, descending=descending)[0], input
    )
    if out is None:
        return values
    with torch.no_grad():
        out.resize_(values.shape).copy_(values)
    return out
