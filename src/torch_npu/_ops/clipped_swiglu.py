"""``torch_npu.npu_clipped_swiglu(x, *, group_index=None, dim=-1, alpha=1.702, limit=7.0,
bias=1.0, interleaved=True)``: the clipped SwiGLU of GPT-OSS, as its documentation computes it:
``x`` is viewed as ``[pre, cut * after]`` around ``dim`` (``cut`` = ``x.shape[dim]``); only the
first ``sum(group_index)`` rows are computed (the rest of the result is 0); ``A``/``B`` are the
even/odd columns (``interleaved``) or the two halves of each row;
``A = min(A, limit)``, ``B = clamp(B, -limit, limit)``, ``y = A * sigmoid(alpha * A) * (B + bias)``,
of ``x``'s shape with ``dim`` halved. Computed in fp32, stored once; torch_npu registers no
backward."""

from __future__ import annotations

import math
from typing import Optional

import torch

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator


@operator
def npu_clipped_swiglu(
    x: torch.Tensor,
    *,
    group_index: Optional[torch.Tensor] = None,
    dim: int = -1,
    alpha: float = 1.702,
    limit: float = 7.0,
    bias: float = 1.0,
    interleaved: bool = True,
) -> torch.Tensor:
    name = "npu_clipped_swiglu"
    if x.dim() < 2:
        raise RuntimeError(f"{name}: x must have more than one dimension, got {x.dim()}")
    if not -x.dim() <= dim < x.dim():
        raise RuntimeError(f"{name}: dim {dim} out of range [{-x.dim()}, {x.dim() - 1}]")
    dim %= x.dim()
    if x.shape[dim] % 2:
        raise RuntimeError(f"{name}: dimension {dim} of size {x.shape[dim]} is not even")
    pre = math.prod(x.shape[:dim])
    rows = pre
    if group_index is not None:
        if group_index.dim() != 1:
            raise RuntimeError(f"{name}: group_index must be 1-D, got {group_index.dim()}-D")
        rows = int(group_index.sum())
        if not 0 <= rows <= pre:
            raise RuntimeError(f"{name}: sum(group_index) = {rows} outside [0, {pre}] rows")
    out_shape = list(x.shape)
    out_shape[dim] //= 2

    def compute(x):
        v = upcast(x).float().reshape(pre, -1)
        a, b = (v[:, 0::2], v[:, 1::2]) if interleaved else torch.chunk(v, 2, dim=1)
        a = a.clamp(max=float(limit))
        b = b.clamp(min=-float(limit), max=float(limit))
        y = a * torch.sigmoid(float(alpha) * a) * (b + float(bias))
        y[rows:] = 0
        return store(y.reshape(out_shape), x.dtype)

    return without_derivative(name, compute, x)
