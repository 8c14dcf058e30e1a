"""``torch_npu.npu_add_rms_norm(x1, x2, gamma, epsilon=1e-6) -> (y, rstd, x)`` and
``npu_add_rms_norm_cast(x1, x2, gamma, epsilon=1e-6) -> (y_fp32, y, rstd, x)``: the residual
add fused with RMS normalisation over the trailing ``gamma.dim()`` dimensions:
``x = x1 + x2``, ``rstd = 1 / sqrt(mean(x^2) + epsilon)``, ``y = x * rstd * gamma``.

As on the NPU the sum is computed in fp32 and normalised from those fp32 values (the kernel
keeps ``x`` in fp32 on chip), and ``x`` and ``y`` are each stored once in the inputs' dtype;
``rstd`` is fp32 of shape ``x.shape[:-gamma.dim()] + (1,) * gamma.dim()``. ``_cast`` also returns
``y`` in fp32 (before its rounding). torch_npu registers no backward for either: a backward
through them raises."""

from __future__ import annotations

from typing import Tuple

import torch

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator


def _check(name: str, x1: torch.Tensor, x2: torch.Tensor, gamma: torch.Tensor) -> None:
    if x1.shape != x2.shape:
        raise RuntimeError(
            f"{name}: x1 {tuple(x1.shape)} and x2 {tuple(x2.shape)} must have the same shape"
        )
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"{name}: x1 ({x1.dtype}) and x2 ({x2.dtype}) must have one dtype")
    if gamma.dim() > x1.dim() or (
        gamma.dim() and tuple(x1.shape[x1.dim() - gamma.dim() :]) != tuple(gamma.shape)
    ):
        raise RuntimeError(
            f"{name}: gamma of shape {tuple(gamma.shape)} does not match the "
            f"trailing dimensions of x1 {tuple(x1.shape)}"
        )


def _normalised(x1, x2, gamma, epsilon):
    """(y in fp32, rstd fp32, x in fp32)."""
    x = upcast(x1).float() + upcast(x2).float()
    dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
    square = x.pow(2).mean(dim=dims, keepdim=True) if dims else x.pow(2)
    rstd = torch.rsqrt(square + float(epsilon))
    return x * rstd * upcast(gamma).float(), rstd, x


@operator
def npu_add_rms_norm(
    x1: torch.Tensor, x2: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-06
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    _check("npu_add_rms_norm", x1, x2, gamma)

    def compute(x1, x2, gamma):
        y, rstd, x = _normalised(x1, x2, gamma, epsilon)
        return store(y, x1.dtype), rstd, store(x, x1.dtype)

    return without_derivative("npu_add_rms_norm", compute, x1, x2, gamma)


@operator
def npu_add_rms_norm_cast(
    x1: torch.Tensor, x2: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-06
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    _check("npu_add_rms_norm_cast", x1, x2, gamma)
    if x1.dtype not in (torch.float16, torch.bfloat16):
        raise RuntimeError(f"npu_add_rms_norm_cast: x1 must be float16 or bfloat16, got {x1.dtype}")

    def compute(x1, x2, gamma):
        y, rstd, x = _normalised(x1, x2, gamma, epsilon)
        return y, store(y, x1.dtype), rstd, store(x, x1.dtype)

    return without_derivative("npu_add_rms_norm_cast", compute, x1, x2, gamma)
