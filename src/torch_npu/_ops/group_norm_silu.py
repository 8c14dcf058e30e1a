"""``torch_npu.npu_group_norm_silu(input, weight, bias, group, eps=1e-5) -> (out, mean, rstd)``:
group normalisation over ``group`` groups of the channels (dimension 1) with a per-channel
affine ``weight``/``bias``, then SiLU; ``mean`` and ``rstd`` (``1 / sqrt(var + eps)``, biased
variance) per ``(N, group)``, all in the input's dtype, computed in fp32 and stored once.
torch_npu registers no backward: torch's autograd fallback
decides (see _no_derivative)."""

from __future__ import annotations

from typing import Optional, Tuple

import torch

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator


@operator
def npu_group_norm_silu(
    input: torch.Tensor,
    weight: Optional[torch.Tensor],
    bias: Optional[torch.Tensor],
    group: int,
    eps: float = 1e-05,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    name = "npu_group_norm_silu"
    if input.dim() < 2 or group <= 0 or input.shape[1] % group:
        raise RuntimeError(
            f"{name}: input {tuple(input.shape)} needs 2 or more dimensions and "
            f"channels divisible by group {group}"
        )
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (input.shape[1],):
            raise RuntimeError(
                f"{name}: {what} must have shape ({input.shape[1]},), got {tuple(t.shape)}"
            )

    def compute(x, *affine):
        v = upcast(x).float()
        n, c = v.shape[0], v.shape[1]
        grouped = v.reshape(n, group, -1)
        mean = grouped.mean(-1)
        rstd = torch.rsqrt(grouped.var(-1, unbiased=False) + float(eps))
        y = ((grouped - mean[..., None]) * rstd[..., None]).reshape(v.shape)
        shape = (1, c) + (1,) * (v.dim() - 2)
        if weight is not None:
            y = y * upcast(weight).float().reshape(shape)
        if bias is not None:
            y = y + upcast(bias).float().reshape(shape)
        return (store(y * torch.sigmoid(y), x.dtype), store(mean, x.dtype), store(rstd, x.dtype))

    return without_derivative(name, compute, input)
