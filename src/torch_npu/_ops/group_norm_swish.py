"""``torch_npu.npu_group_norm_swish(input, num_groups, weight, bias, eps=1e-5, swish_scale=1.0)
-> (out, mean, rstd)``: group normalisation over ``num_groups`` groups of the channels
(dimension 1) with a per-channel ``weight``/``bias``, then Swish, ``y * sigmoid(swish_scale *
y)``; ``mean`` and ``rstd`` (``1 / sqrt(var + eps)``, biased variance) ``(N, num_groups)``; all
in the input's dtype, computed in fp32 and stored once. Differentiable in input, weight and bias
(torch_npu's ``npu_group_norm_swish_grad``); the statistics are not."""

from __future__ import annotations

from typing import Optional, Tuple

import torch

from ._precision import store, upcast
from ._registry import operator


@operator
def npu_group_norm_swish(
    input: torch.Tensor,
    num_groups: int,
    weight: torch.Tensor,
    bias: torch.Tensor,
    eps: Optional[float] = 1e-05,
    swish_scale: Optional[float] = 1.0,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    name = "npu_group_norm_swish"
    if not 2 <= input.dim() <= 8 or num_groups <= 0 or input.shape[1] % num_groups:
        raise RuntimeError(
            f"{name}: input {tuple(input.shape)} needs 2-8 dimensions and "
            f"channels divisible by num_groups {num_groups}"
        )
    for what, t in (("weight", weight), ("bias", bias)):
        if tuple(t.shape) != (input.shape[1],):
            raise RuntimeError(
                f"{name}: {what} must have shape ({input.shape[1]},), got {tuple(t.shape)}"
            )
    eps = 1e-5 if eps is None else float(eps)
    scale = 1.0 if swish_scale is None else float(swish_scale)
    v = upcast(input).float()
    n, c = v.shape[0], v.shape[1]
    grouped = v.reshape(n, num_groups, -1)
    mean = grouped.mean(-1)
    rstd = torch.rsqrt(grouped.var(-1, unbiased=False) + eps)
    shape = (1, c) + (1,) * (v.dim() - 2)
    y = ((grouped - mean[..., None]) * rstd[..., None]).reshape(v.shape)
    y = y * upcast(weight).float().reshape(shape) + upcast(bias).float().reshape(shape)
    out = y * torch.sigmoid(scale * y)
    return (
        store(out, input.dtype),
        store(mean.detach(), input.dtype),
        store(rstd.detach(), input.dtype),
    )
