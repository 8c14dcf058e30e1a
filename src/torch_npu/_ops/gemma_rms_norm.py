"""``torch_npu.npu_gemma_rms_norm(input, gamma, epsilon=1e-6) -> (y, rstd)``: Gemma's RMS
normalisation, whose weight is an offset from one: ``y = x * rstd * (1 + gamma)`` with
``rstd = 1 / sqrt(mean(x^2) + epsilon)`` over the trailing ``gamma.dim()`` dimensions, computed in
fp32 and stored once in the input's dtype. ``rstd`` is fp32 of shape
``input.shape[:-gamma.dim()] + (1,) * gamma.dim()`` (op-plugin's meta function). torch_npu
registers no backward: torch's autograd fallback
decides (see _no_derivative)."""

from __future__ import annotations

from typing import Tuple

import torch

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator


@operator
def npu_gemma_rms_norm(
    input: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-06
) -> Tuple[torch.Tensor, torch.Tensor]:
    if gamma.dim() > input.dim() or (
        gamma.dim() and tuple(input.shape[input.dim() - gamma.dim() :]) != tuple(gamma.shape)
    ):
        raise RuntimeError(
            f"npu_gemma_rms_norm: gamma of shape {tuple(gamma.shape)} does not "
            f"match the trailing dimensions of input {tuple(input.shape)}"
        )

    def compute(input, gamma):
        x = upcast(input).float()
        dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
        square = x.pow(2).mean(dim=dims, keepdim=True) if dims else x.pow(2)
        rstd = torch.rsqrt(square + float(epsilon))
        return store(x * rstd * (1.0 + upcast(gamma).float()), input.dtype), rstd

    return without_derivative("npu_gemma_rms_norm", compute, input, gamma)
