"""``torch_npu.npu_rms_norm(input, gamma, epsilon=1e-6) -> (y, rstd)``: RMS normalisation over
the trailing ``gamma.dim()`` dimensions, ``y = x * rstd * gamma`` with
``rstd = 1 / sqrt(mean(x^2) + epsilon)``, computed in fp32. ``y`` has ``input``'s dtype; ``rstd``
is fp32 of shape ``self.shape[:-gamma.dim()] + (1,) * gamma.dim()`` and not differentiable. The
backward gives ``input`` and ``gamma`` gradients (``npu_rms_norm_backward``)."""

from __future__ import annotations

from typing import Tuple

import torch

from ._precision import store, upcast
from ._registry import operator


@operator
def npu_rms_norm(
    input: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-06
) -> Tuple[torch.Tensor, torch.Tensor]:
    if input.dim() < gamma.dim():
        raise RuntimeError("npu_rms_norm: the gamma shape should not be bigger than self shape")
    if gamma.dim() and tuple(input.shape[input.dim() - gamma.dim() :]) != tuple(gamma.shape):
        raise RuntimeError(
            f"npu_rms_norm: gamma of shape {tuple(gamma.shape)} does not match the "
            f"trailing dimensions of input {tuple(input.shape)}"
        )
    x = upcast(input)
    dims = tuple(range(input.dim() - gamma.dim(), input.dim()))
    rstd = (
        torch.rsqrt(x.pow(2).mean(dim=dims, keepdim=True) + float(epsilon))
        if dims
        else torch.rsqrt(x.pow(2) + float(epsilon))
    )
    y = x * rstd * upcast(gamma).float()
    return store(y, input.dtype), rstd.detach()
