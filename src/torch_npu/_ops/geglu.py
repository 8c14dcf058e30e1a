"""``torch_npu.npu_geglu(input, dim=-1, approximate=1, activate_left=False) -> (y, gelu)``:
GeGLU. ``input`` is split in two halves along ``dim``; GELU (``approximate`` 0: erf, 1: tanh)
acts on the second half (the first with ``activate_left``) and ``y`` is it times the other
half. Both ``y`` and the GELU values are returned, computed in fp32 and stored once in the
input's dtype, with their gradients (torch_npu's ``npu_geglu_grad``)."""

from __future__ import annotations

from typing import Tuple

import torch
import torch.nn.functional as F

from ._precision import store, upcast
from ._registry import operator


@operator
def npu_geglu(
    input: torch.Tensor, dim: int = -1, approximate: int = 1, activate_left: bool = False
) -> Tuple[torch.Tensor, torch.Tensor]:
    n = max(input.dim(), 1)
    if not -n <= dim < n:
        raise RuntimeError(f"npu_geglu: dim {dim} out of range [{-n}, {n - 1}]")
    if input.shape[dim] % 2:
        raise RuntimeError(
            f"npu_geglu: dimension {dim} of size {input.shape[dim]} is not divisible by 2"
        )
    if approximate not in (0, 1):
        raise RuntimeError(
            f"npu_geglu: approximate must be 0 (none) or 1 (tanh), got {approximate}"
        )
    left, right = torch.chunk(upcast(input), 2, dim=dim)
    active, other = (left, right) if activate_left else (right, left)
    gelu = F.gelu(active, approximate="tanh") if approximate == 1 else F.gelu(active)
    return store(other * gelu, input.dtype), store(gelu, input.dtype)
